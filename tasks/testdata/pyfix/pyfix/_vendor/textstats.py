"""A vendored copy of a text helper (nothing imports it): the body of
pyfix.util.histogram under another name."""


def word_counts(words):
    """Count the words."""
    counts = {}
    for w in words:
        key = w.strip().lower()  # same code, another comment
        if key:
            counts[key] = counts.get(key, 0) + 1
    return counts
