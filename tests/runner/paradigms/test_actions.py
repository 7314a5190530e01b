from runner.paradigms.actions import parse_action


def test_first_action_wins_and_outside_text_is_ignored():
    action = parse_action("thinking...\n<execute>\nprint(1)\n</execute>\n<solution>x</solution>")
    assert action.kind == "execute"
    assert action.body == "print(1)"


def test_solution_body_is_kept_verbatim():
    action = parse_action("Done.<solution>\n{\"a\": 1}\n</solution> bye")
    assert (action.kind, action.body) == ("solution", '{"a": 1}')


def test_unclosed_block_cut_by_stop_sequence_counts():
    action = parse_action("<execute>\nx = 2\nprint(x)")
    assert (action.kind, action.body) == ("execute", "x = 2\nprint(x)")


def test_no_tags_is_no_action():
    assert parse_action("I would compute the PSD with Welch.").kind == "none"
    assert parse_action("").kind == "none"


def test_tags_are_case_insensitive():
    assert parse_action("<SOLUTION>ok</SOLUTION>").body == "ok"
