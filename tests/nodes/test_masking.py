"""The masking rules (canal.nodes.masking), one by one, without a run."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from canal.nodes.masking import MASK, Masker

TOKEN = "canal:sealed:AbC123=="


def test_data_parts_are_masked_and_the_documents_own_fields_are_not():
    masker = Masker.of(["prod", True, 7]).naming("deploy-prod-7")
    document = {"thread_id": "deploy-prod-7", "status": "running", "step": {"id": "prod"},
                "gate": {"required": True, "min": 7}, "missing": ["prod"],
                "executed": [{"ok": True, "key": "deploy-prod-7:s:0", "attempt": 7,
                              "arguments": {"target": TOKEN, "prod": "to prod", "on": True},
                              "result": {"id": "deploy-prod-7", "note": "prod is up", "n": 7},
                              "error": "deploy-prod-7 failed on prod"}]}
    assert masker.document(document) == {
        "thread_id": "deploy-prod-7", "status": "running", "step": {"id": "prod"},
        "gate": {"required": True, "min": 7}, "missing": ["prod"],
        "executed": [{"ok": True, "key": "deploy-prod-7:s:0", "attempt": 7,
                      "arguments": {"target": MASK, "prod": f"to {MASK}", "on": True},
                      "result": {"id": "deploy-prod-7", "note": f"{MASK} is up", "n": 7},
                      "error": f"deploy-prod-7 failed on {MASK}"}]}


def test_a_name_protects_only_the_secret_inside_it():
    masker = Masker.of(["password-ask"], names=["ask"])
    assert masker.text("ask: password-ask") == f"ask: {MASK}"


def test_long_uncommon_numbers_are_searched_and_short_or_common_ones_are_not():
    masker = Masker.of([4111111111111111, 982731, 100000, 777777, 4321, 12.5])
    assert masker.value({"card": 4111111111111111, "text": "card 4111111111111111 ok",
                         "other": 982731, "round": 100000, "same": 777777, "pin": 4321,
                         "f": 12.5, "in": "100000 777777 4321"}) == {
        "card": MASK, "text": f"card {MASK} ok", "other": MASK, "round": 100000,
        "same": 777777, "pin": 4321, "f": 12.5, "in": "100000 777777 4321"}


def test_every_leaf_and_the_text_of_a_sensitive_list_or_object():
    creds = {"user": "ann", "pin": 12, "inner": {"code": "zz"}, "tags": ["x", True]}
    masker = Masker.of([creds])
    assert masker.value({"echo": creds}) == {"echo": MASK}
    assert masker.value({"user": "ann", "inner": {"code": "zz"}, "pin": 12}) == {
        "user": MASK, "inner": MASK, "pin": 12}
    for text in (json.dumps(creds, separators=(",", ":")), json.dumps(creds), repr(creds),
                 json.dumps(creds["inner"]), repr(creds["tags"])):
        assert masker.text(f"got {text}!") == f"got {MASK}!", text


def test_a_list_of_booleans_is_not_searched_for():
    masker = Masker.of([[True, False], {"on": True}])
    assert masker.value({"a": [True, False], "b": '{"on": true}'}) == {
        "a": [True, False], "b": '{"on": true}'}


def test_overlapping_secrets_make_one_mask():
    masker = Masker.of(["abcdef", "defghi"])
    assert masker.text("xabcdefghiy") == f"x{MASK}y"


secrets = st.text(min_size=4, max_size=20).filter(lambda s: "*" not in s)


@settings(max_examples=200, deadline=None)
@given(secret=secrets, before=st.text(max_size=5), after=st.text(max_size=5))
def test_no_escaped_form_of_a_secret_survives(secret, before, after):
    masker = Masker.of([secret])
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
             repr(secret)[1:-1]}
    for form in forms:
        shown = masker.text(before + form + after)
        assert form not in shown


def test_a_masker_for_a_list_of_secrets_masks_only_the_data_parts():
    assert Masker.of(["prod"]).document(
        {"thread_id": "a-prod", "data": {"x": "prod"}, "result": "is prod"}) == {
        "thread_id": "a-prod", "data": {"x": MASK}, "result": f"is {MASK}"}
