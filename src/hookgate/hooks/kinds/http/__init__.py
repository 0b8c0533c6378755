"""`http:` hooks: the event POSTed to a URL (`run`), the target as configured
(`target`), response bodies read to a cap (`capped`, which the model client uses too)."""
