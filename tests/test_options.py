"""Rule option values as they arrive from files, Python and `--option k=v`
text: one reading for every game (kernels/options.py)."""
import pytest

from etappe.kernels.options import option_value


@pytest.mark.parametrize("text, meaning", [("true", True), ("On", True), ("1", True),
                                           ("false", False), (" off ", False), ("0", False)])
def test_switches_read_from_text(text, meaning):
    assert option_value("harder", text, False) is meaning


@pytest.mark.parametrize("value, problem", [(2, "must be true or false"), ("yes please", "must be true or false"),
                                            ("maybe", "must be true or false")])
def test_a_switch_refuses_anything_else(value, problem):
    with pytest.raises(ValueError, match=f"harder: {problem}"):
        option_value("harder", value, False)


def test_whole_numbers_and_choices():
    assert option_value("turn_cap", "-1", 0) == -1 and option_value("turn_cap", " 40 ", 0) == 40
    for bad in ("+-3", "2.5", "x", True, 2.5):
        with pytest.raises(ValueError, match="turn_cap: must be a whole number"):
            option_value("turn_cap", bad, 0)
    assert option_value("shutout", "fr", "parker", ("parker", "fr")) == "fr"
    with pytest.raises(ValueError, match="shutout: 'french' is not one of parker, fr"):
        option_value("shutout", "french", "parker", ("parker", "fr"))


def test_option_text_writes_options_as_the_command_line_takes_them():
    from etappe.kernels.options import option_text, option_value

    text = option_text({"roll_after_safety": False, "overshoot": "disqualify", "turn_cap": 300})
    assert text == "roll_after_safety=false, overshoot=disqualify, turn_cap=300"
    # and reads back as the same values
    read = dict(item.split("=") for item in text.split(", "))
    assert option_value("roll_after_safety", read["roll_after_safety"], True) is False
    assert option_value("overshoot", read["overshoot"], "forbid", ("forbid", "disqualify")) == "disqualify"
    assert option_value("turn_cap", read["turn_cap"], 0) == 300
