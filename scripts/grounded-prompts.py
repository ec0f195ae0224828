#!/usr/bin/env python3
"""Writes scripts/grounded-prompts.jsonl: input-grounded prompts (rewrite,
summarize, code-edit) that quote their input, for speculative decoding's
benchmark (`govllm bench serve --dataset-name custom --dataset-path
scripts/grounded-prompts.jsonl`). Deterministic: run it again to get the
same file."""
import json
import random

rng = random.Random(20261203)
names = ["Lily", "Ben", "Tom", "Mia", "Sam", "Anna", "Max", "Lucy", "Tim", "Sue", "Jack", "Emma"]
animals = ["cat", "dog", "bird", "bunny", "frog", "duck", "bear", "fox"]
places = ["park", "garden", "forest", "beach", "house", "farm", "lake", "school"]
things = ["ball", "kite", "box", "hat", "cake", "toy car", "red balloon", "big book"]
feelings = ["happy", "sad", "scared", "proud", "excited", "tired"]


def story():
    a, b = rng.sample(names, 2)
    an, pl, th, fe = rng.choice(animals), rng.choice(places), rng.choice(things), rng.choice(feelings)
    s = [
        f"Once upon a time, there was a little girl named {a}.",
        f"She had a {an} who loved to play in the {pl}.",
        f"One day, {a} found a {th} under a tree.",
        f"She showed the {th} to her friend {b}.",
        f"{b} said, \"Can I play with the {th} too?\"",
        f"{a} said yes, and they played together all day.",
        f"The {an} ran around them and barked and jumped.",
        f"When the sun went down, {a} felt {fe}.",
        f"She went home with her {an} and her {th}.",
        "The end.",
    ]
    return " ".join(s[: rng.randint(7, 10)]), a, b


def pycode():
    fn = rng.choice(["total", "average", "count_words", "largest", "clean"])
    var = rng.choice(["items", "values", "numbers", "rows"])
    body = (
        f"def {fn}({var}):\n"
        f"    result = 0\n"
        f"    for x in {var}:\n"
        f"        if x is None:\n"
        f"            continue\n"
        f"        result = result + x\n"
        f"    return result\n\n\n"
        f"def main():\n"
        f"    data = [1, 2, 3, None, 5]\n"
        f"    print({fn}(data))\n\n\n"
        f"if __name__ == \"__main__\":\n"
        f"    main()\n"
    )
    return body, fn, var


def gocode():
    fn = rng.choice(["Sum", "Mean", "Max", "Filter", "Join"])
    return (
        "package stats\n\n"
        f"// {fn} reduces xs.\n"
        f"func {fn}(xs []float64) float64 {{\n"
        "\tvar acc float64\n"
        "\tfor _, x := range xs {\n"
        "\t\tacc += x\n"
        "\t}\n"
        "\treturn acc\n"
        "}\n"
    ), fn


prompts = []
for i in range(24):
    text, a, b = story()
    c = rng.choice([n for n in names if n not in (a, b)])
    if i % 2 == 0:
        prompts.append(f"Rewrite the following story, changing the name {a} to {c} and keeping every other word the same.\n\nStory: {text}\n\nRewritten story:")
    else:
        prompts.append(f"Summarize the following story by quoting its three most important sentences word for word.\n\nStory: {text}\n\nSummary:")
for i in range(18):
    code, fn, var = pycode()
    new = fn + "_all"
    prompts.append(f"Rename the function {fn} to {new} everywhere in this Python file and print the whole file.\n\n```python\n{code}```\n\nThe whole file:\n\n```python\n")
for i in range(18):
    code, fn = gocode()
    prompts.append(f"Add a doc comment line saying it returns 0 for an empty slice to the function {fn} below and print the whole file.\n\n```go\n{code}```\n\nThe whole file:\n\n```go\n")

with open("scripts/grounded-prompts.jsonl", "w") as f:
    for p in prompts:
        f.write(json.dumps({"prompt": p}) + "\n")
print(len(prompts), "prompts")
