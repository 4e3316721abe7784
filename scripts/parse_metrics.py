"""Parses a Prometheus text exposition read from stdin with prometheus_client's parser and
prints it as JSON: {"families": [{"name", "type", "documentation", "samples": [{"name",
"labels", "value"}]}]}. Exits non-zero (with the parser's error) when the text is invalid."""

import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def main() -> None:
    text = sys.stdin.read()
    families = []
    for family in text_string_to_metric_families(text):
        families.append(
            {
                "name": family.name,
                "type": family.type,
                "documentation": family.documentation,
                "samples": [
                    {
                        "name": s.name,
                        "labels": s.labels,
                        "value": s.value if math.isfinite(s.value) else str(s.value),
                    }
                    for s in family.samples
                ],
            }
        )
    json.dump({"families": families}, sys.stdout)


if __name__ == "__main__":
    main()
