"""JSON Schema validation of a synthetic check's answer.

Uses the ``jsonschema`` package when it is installed; otherwise a small
validator for the common keywords (type, properties, required, items,
enum, minimum, maximum, minItems, maxItems), so the agent stays light.
"""

from __future__ import annotations

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def validation_error(instance, schema: dict) -> str | None:
    """Return why ``instance`` breaks ``schema``, or None when it conforms."""
    try:
        import jsonschema
    except ImportError:
        return _lite(instance, schema, "$")
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(instance)
    )
    if error is None:
        return None
    path = "$" + "".join(f"[{p!r}]" for p in error.absolute_path)
    return f"{path}: {error.message}"


def _type_ok(instance, expected) -> bool:
    names = expected if isinstance(expected, list) else [expected]
    for name in names:
        if name == "integer" and isinstance(instance, int) and not isinstance(instance, bool):
            return True
        if (
            name == "number"
            and isinstance(instance, int | float)
            and not isinstance(instance, bool)
        ):
            return True
        if (
            name in TYPES
            and isinstance(instance, TYPES[name])
            and not (name != "boolean" and isinstance(instance, bool))
        ):
            return True
    return False


def _lite(instance, schema: dict, path: str) -> str | None:
    if not isinstance(schema, dict):
        return None
    if "type" in schema and not _type_ok(instance, schema["type"]):
        return f"{path}: {instance!r} is not of type {schema['type']!r}"
    if "enum" in schema and instance not in schema["enum"]:
        return f"{path}: {instance!r} is not one of {schema['enum']!r}"
    if isinstance(instance, int | float) and not isinstance(instance, bool):
        if "minimum" in schema and instance < schema["minimum"]:
            return f"{path}: {instance!r} is less than the minimum of {schema['minimum']!r}"
        if "maximum" in schema and instance > schema["maximum"]:
            return f"{path}: {instance!r} is greater than the maximum of {schema['maximum']!r}"
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            if key not in instance:
                return f"{path}: {key!r} is a required property"
        for key, sub in schema.get("properties", {}).items():
            if key in instance and (err := _lite(instance[key], sub, f"{path}[{key!r}]")):
                return err
    if isinstance(instance, list):
        if len(instance) < schema.get("minItems", 0):
            return f"{path}: should have at least {schema['minItems']} items"
        if "maxItems" in schema and len(instance) > schema["maxItems"]:
            return f"{path}: should have at most {schema['maxItems']} items"
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(instance):
                if err := _lite(item, schema["items"], f"{path}[{i}]"):
                    return err
    return None
