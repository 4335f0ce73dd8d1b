"""The JSON Schema of `qd-explain --json` (qd/explain/schema.json) and a checker for the subset of
JSON Schema it uses, shared by the explain tests."""

import json
from pathlib import Path

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "qd" / "explain" / "schema.json").read_text())


def conforms(value, schema, root=SCHEMA, where="$"):
    """The subset of JSON Schema the explain schema uses: type, enum, required, properties,
    additionalProperties, items, $ref. Returns the list of violations."""
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    errs = []
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        py = {"object": dict, "array": list, "string": str, "null": type(None), "boolean": bool}
        ok = any((isinstance(value, int) and not isinstance(value, bool)) if t == "integer"
                 else isinstance(value, py[t])
                 for t in names)
        if not ok:
            return [f"{where}: {value!r} is not {types}"]
    if "enum" in schema and value not in schema["enum"]:
        errs.append(f"{where}: {value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        errs += [f"{where}: missing {k}" for k in schema.get("required", []) if k not in value]
        for k, v in value.items():
            sub = schema.get("properties", {}).get(k, schema.get("additionalProperties"))
            if isinstance(sub, dict):
                errs += conforms(v, sub, root, f"{where}.{k}")
    if isinstance(value, list) and "items" in schema:
        for n, v in enumerate(value):
            errs += conforms(v, schema["items"], root, f"{where}[{n}]")
    return errs
