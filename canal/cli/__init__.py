"""The command line; ``canal.cli.main:main`` is the console script."""
