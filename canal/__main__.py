"""``python -m canal`` runs the command line."""

from canal.cli.main import main

main()
