"""The response base models and the field types the response models share."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    WithJsonSchema,
    model_serializer,
    model_validator,
)

# A JSON number kept as given: 3 stays 3 and 3.0 stays 3.0 (a bare float would turn 3 into 3.0).
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
# Labels as stored: series labels are strings; bundles and the CLI may store other JSON values.
Labels = dict[str, Any]


class Out(BaseModel):
    """A response body as the store's dict reads: fields declared in the dict's key order."""

    # Undeclared keys pass through, after the declared ones; routes set
    # response_model_exclude_unset, so a key the handler left out stays out (never null).
    # Input limits are not checked: bundles and the CLI store data under their own rules.
    model_config = ConfigDict(extra="allow")


class Ordered(Out):
    """An ``Out`` whose keys come in varying order, extras among them: written as given."""

    # A Python step per object (about 20 us): for tens or hundreds of objects, not 10,000.
    _keys: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_keys(cls, data: Any, handler):
        model = handler(data)
        if isinstance(data, dict) and isinstance(model, Ordered):
            model._keys = tuple(data)
        return model

    @model_serializer(mode="wrap")
    def _keys_as_given(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo):
        out = handler(self)
        if not self._keys or not isinstance(out, dict):
            return out
        fields = type(self).model_fields.items()
        rename = {} if info.by_alias else {f.alias: n for n, f in fields if f.alias}
        keys = (rename.get(k, k) for k in self._keys)
        return {k: out[k] for k in keys if k in out}
