"""Query API error answers become a sentence, with the error kept as structured content."""

import json
import re

from eshu_mcp.dispatch.api_errors import api_error_sentence, with_selectors_not_found
from eshu_mcp.dispatch.results import result_from_response


def plain(status: int, detail: str) -> bytes:
    reasons = {400: "Bad Request", 404: "Not Found", 422: "Unprocessable Entity"}
    return json.dumps({"error": reasons.get(status, "Error"), "detail": detail}).encode()


def test_bounds_in_go_notation_read_as_words():
    assert api_error_sentence("limit must be an integer in [1, 500]", 400) == (
        "limit must be an integer between 1 and 500."
    )
    assert api_error_sentence("limit must be <= 200", 400) == "limit must be at most 200."
    assert api_error_sentence("offset must be >= 0", 400) == "offset must be at least 0."


def test_go_unmarshal_errors_name_the_argument_and_the_types():
    message = (
        "invalid JSON: json: cannot unmarshal string into Go struct field .start_line of type int"
    )
    assert api_error_sentence(message, 400) == (
        "start_line must be an integer, but a string was given."
    )


def test_long_messages_are_bounded():
    sentence = api_error_sentence("x" * 5000, 400)
    assert len(sentence) <= 601
    assert sentence.endswith("...")


def test_a_long_list_of_candidates_loses_its_middle_not_the_advice():
    pairs = ", ".join(f"start (a.py:1) [e1] -> Reactor{n}.callLater (b.py:{n})" for n in range(40))
    message = f"call-chain endpoints matched multiple reachable entity pairs: {pairs}; "
    message += "pass start_entity_id and end_entity_id to pick one"
    sentence = api_error_sentence(message, 400)
    assert len(sentence) <= 601
    assert sentence.startswith("call-chain endpoints matched multiple reachable entity pairs")
    assert "Reactor0.callLater (b.py:0)" in sentence
    # The list ends on a whole pair, then the advice.
    assert re.search(r"Reactor\d+\.callLater \(b\.py:\d+\), \.\.\.; pass", sentence)
    assert sentence.endswith(", ...; pass start_entity_id and end_entity_id to pick one.")


def test_plain_error_body_keeps_its_fields_as_details():
    result = result_from_response("find_code", 400, plain(400, "query is required"))
    assert result["content"] == [{"type": "text", "text": "query is required."}]
    assert result["isError"] is True
    assert result["structuredContent"] == {
        "data": None,
        "error": {
            "code": "invalid_argument",
            "details": {"error": "Bad Request", "http_status": 400},
            "message": "query is required",
        },
        "truth": None,
    }


def test_not_found_and_scope_too_broad_keep_their_status():
    result = result_from_response("get_entity_content", 404, plain(404, "entity not found"))
    assert result["content"][0]["text"] == "entity not found."
    assert result["structuredContent"]["error"]["code"] == "not_found"
    result = result_from_response("t", 422, plain(422, "import investigation scope is too broad"))
    assert result["structuredContent"]["error"]["details"]["http_status"] == 422


def test_semantic_search_error_shape_keeps_its_code():
    body = json.dumps(
        {"error_code": "invalid_argument", "message": "repo_id is required", "capability": "c"}
    ).encode()
    result = result_from_response("semantic_search", 400, body)
    assert result["content"][0]["text"] == "repo_id is required."
    error = result["structuredContent"]["error"]
    assert (error["code"], error["details"]["capability"]) == ("invalid_argument", "c")


def test_envelope_error_text_is_its_message_and_the_envelope_stays():
    envelope = {
        "data": None,
        "truth": None,
        "error": {"code": "ambiguous", "message": 'function "f" matched 2 entities'},
    }
    result = result_from_response("t", 409, json.dumps(envelope).encode())
    assert result["content"][0]["text"] == 'function "f" matched 2 entities.'
    assert result["structuredContent"]["error"]["code"] == "ambiguous"
    assert result["content"][1]["resource"]["uri"] == "eshu://tool-result/envelope"


def test_server_failures_say_so():
    result = result_from_response("t", 503, plain(503, "reader not configured"))
    assert result["content"][0]["text"] == (
        "The query API failed (HTTP 503): reader not configured."
    )
    assert result["structuredContent"]["error"]["code"] == "backend_unavailable"


def test_not_found_names_what_was_looked_for():
    result = result_from_response("t", 404, plain(404, "entity not found"))
    args = {"function_name": "nope", "limit": 5, "repo_id": "r" * 200, "language": ""}
    named = with_selectors_not_found(result, args)
    assert named["content"][0]["text"] == (
        f'entity not found (looked for function_name "nope", repo_id "{"r" * 80}").'
    )
    assert named["structuredContent"] == result["structuredContent"]


def test_other_results_are_not_annotated():
    refused = result_from_response("t", 400, plain(400, "query is required"))
    assert with_selectors_not_found(refused, {"query": "x"}) is refused
    found = result_from_response("t", 200, b'{"data": [], "truth": null, "error": null}')
    assert with_selectors_not_found(found, {"query": "x"}) is found
