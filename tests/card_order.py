"""A design file's [[cards]] tables in another order, for the tests that
check that a card's place in the file (its type number) changes nothing."""
import re


def in_card_order(text, lead):
    """The design file with its [[cards]] tables reordered: the cards keyed in
    `lead` first, the others after them in reverse order."""
    head, *cards = re.split(r"(?m)^(?=\[\[cards\]\])", text)
    key = {block: re.search(r'(?m)^key = "(\w+)"', block)[1] for block in cards}
    first = [block for k in lead for block in cards if key[block] == k]
    return head + "".join(first + [block for block in reversed(cards) if block not in first])
