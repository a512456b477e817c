"""One spec grammar for every model role: ``provider/model``.

Every role (chat, nli, nli3, lm, reranker, embedding, relevance, coherence, evaluator) names its
model the same way::

    spec     := stage ("+" stage)?          a cascade: lexical first, then the model
    stage    := provider ("/" model)?       model may itself hold "/" (hub ids, paths)

A provider may *wrap* another role: its model is then a spec of that role
(``nli/hf/roberta-large-mnli`` is an evaluator deciding with the NLI spec
``hf/roberta-large-mnli``; ``attrscore/openai/gpt-4o`` a chat spec under AttrScore's prompt).
A role may also take another role's spec as it is (an evaluator spec that names a chat model,
``openai/gpt-4o``, or a relevance spec that names a reranker, ``hf/<path>``).

The spellings of earlier releases (``hf:<path>``, ``t5:<path>``, ``lexical+hf:<path>``,
``nli/t5:<path>``, ``embedding:minilm``) still parse, with a :class:`SpecSpellingWarning` that
names the new spelling. What a spec *builds* is the same in both spellings (backend names, cache
keys), and a run's configuration keeps the spec as written, so run ids of existing runs stay valid.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Literal

from citegraph.errors import ConfigError

__all__ = ["ModelSpec", "Provider", "Role", "SpecSpellingWarning", "parse_in"]


class SpecSpellingWarning(DeprecationWarning):
    """A model spec written in an earlier release's spelling (``hf:<path>``); the message names
    the new one (``hf/<path>``). The old spellings go in the next release."""


@dataclass(frozen=True)
class Provider:
    """One provider of a role: what a spec may name before its first ``/``.

    Attributes:
        name: The provider as written (``hf``, ``vllm``, ``lexical``).
        model: Whether a model follows: ``required`` (``hf/<path>``), ``none`` (``lexical``)
            or ``optional`` (``mock`` / ``mock/<name>``).
        form: The spec form shown in errors and ``citegraph models`` (``hf/<hub id or path>``).
        summary: What the provider is, in a few words.
        example: A spec that works (for the table).
        extra: The pip extra that installs what it needs (``citegraph[nli]``), or ``None``.
        needs: The modules that must be importable for it to be usable here.
        device: Whether it runs a model on this machine's device (``--device`` applies).
        wraps: The role whose spec follows the ``/`` (a wrapper), or ``None``.
        old: The prefix of the old spelling (``hf:``), or ``None``.
    """

    name: str
    model: Literal["required", "none", "optional"]
    form: str
    summary: str
    example: str
    extra: str | None = None
    needs: tuple[str, ...] = ()
    device: bool = False
    wraps: str | None = None
    old: str | None = None


@dataclass(frozen=True)
class Role:
    """A model role and its providers.

    Attributes:
        name: The role (``nli``).
        summary: What a model of this role does.
        providers: Its providers, in the order the table shows them.
        cascade_first: Providers that may stand first in a cascade (``lexical`` in
            ``lexical+hf/<path>``).
        takes: A role whose specs this role also takes as they are (``chat`` for evaluators,
            ``reranker`` for relevance), or ``None``.
        options: The flags or keyword options that configure it, for the table.
        label: How error messages call it (default: its name).
    """

    name: str
    summary: str
    providers: tuple[Provider, ...]
    cascade_first: tuple[str, ...] = ()
    takes: str | None = None
    options: str = ""
    label: str = ""

    @property
    def called(self) -> str:
        """The role as error messages name it (``NLI``, ``three-way NLI``, ``chat model``)."""
        return self.label or self.name

    def provider(self, name: str) -> Provider | None:
        """The provider called ``name``, or ``None``."""
        return next((p for p in self.providers if p.name == name), None)

    def forms(self, roles: dict[str, Role]) -> list[str]:
        """Every spec form this role accepts (the error message lists them)."""
        out = [p.form for p in self.providers]
        out += [
            f"{first}+{p.form}"
            for first in self.cascade_first
            for p in self.providers
            if p.name not in self.cascade_first and p.model == "required"
        ]
        if self.takes:
            out.append(f"any {self.takes} spec ({', '.join(roles[self.takes].forms(roles))})")
        return out


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec.

    Attributes:
        role: The role it was parsed for.
        provider: The provider (for a spec taken from another role, that role's provider).
        model: The model after the ``/`` (``""`` when none).
        text: The spec as written.
        first: A cascade's first stage (``lexical``), or ``None``.
        inner: A wrapper's spec of the wrapped role, or the spec of the role taken as it is.
        old_spelling: Whether it was written in an earlier release's spelling.
        old_prefix: The provider's prefix in that spelling (``hf:``), or ``None``.
    """

    role: str
    provider: str
    model: str
    text: str
    first: ModelSpec | None = None
    inner: ModelSpec | None = None
    old_spelling: bool = field(default=False, compare=False)
    old_prefix: str | None = field(default=None, compare=False)

    @property
    def canonical(self) -> str:
        """The spec in today's spelling (``lexical+hf/<path>``)."""
        return self._spelled(first=False)

    @property
    def first_spelling(self) -> str:
        """The spec in the spelling of the first release (``lexical+hf:<path>``) where the
        provider had one, else :attr:`canonical`: what a run's identity records, so that
        respelling a spec never changes a run id (runs made before the new spelling keep theirs).
        """
        return self._spelled(first=True)

    def _spelled(self, *, first: bool) -> str:
        """The spec in today's spelling, or with ``first`` in the first release's."""
        prefix = self.old_prefix if first and self.old_prefix is not None else f"{self.provider}/"
        if self.inner is not None and self.provider == self.inner.provider:
            body = self.inner._spelled(first=first)  # a spec taken from another role as it is
        elif self.inner is not None:
            body = prefix + self.inner._spelled(first=first)
        else:
            body = prefix + self.model if self.model else self.provider
        return f"{self.first._spelled(first=first)}+{body}" if self.first is not None else body

    @property
    def any_old_spelling(self) -> bool:
        """Whether this spec or any part of it uses an old spelling."""
        parts = [p for p in (self.first, self.inner) if p is not None]
        return self.old_spelling or any(p.any_old_spelling for p in parts)


def _unknown(role: Role, text: str, roles: dict[str, Role], why: str) -> ConfigError:
    forms = "; ".join(role.forms(roles))
    names = ", ".join(p.name for p in role.providers)
    return ConfigError(
        f"unknown {role.called} spec {text!r} ({why}); expected one of: {forms} "
        f"(providers: {names})"
    )


def _stage(role: Role, text: str, whole: str, roles: dict[str, Role]) -> ModelSpec | None:
    """``text`` as one stage of ``role``: ``provider[/model]``, or an old ``provider:model``."""
    name, _, model = text.partition("/")
    old = False
    head, colon, rest = text.partition(":")
    if colon and "/" not in head:
        found = next((p for p in role.providers if p.old == f"{head.strip()}:"), None)
        if found is not None:
            name, model, old = found.name, rest, True
    provider = role.provider(name.strip())
    if provider is None:
        return None
    model = model.strip()
    if provider.model == "none" and model:
        raise ConfigError(f"{role.called} spec {whole!r}: '{provider.name}' takes no model name")
    if provider.model == "required" and not model:
        raise ConfigError(
            f"{role.called} spec {whole!r} has no model name after '{provider.name}/': "
            f"write {provider.form!r}"
        )
    inner = _parse(roles[provider.wraps], model, roles) if provider.wraps else None
    return ModelSpec(
        role.name,
        provider.name,
        model,
        text,
        inner=inner,
        old_spelling=old,
        old_prefix=provider.old,
    )


def _parse(role: Role, text: str, roles: dict[str, Role]) -> ModelSpec:
    text = text.strip()
    if not text:
        raise _unknown(role, text, roles, "empty")
    head, plus, tail = text.partition("+")
    if plus and head.strip() in role.cascade_first:
        if not tail.strip():
            raise _unknown(role, text, roles, "no model after '+'")
        first = _stage(role, head.strip(), text, roles)
        rest = _parse(role, tail, roles)
        if rest.first is not None or rest.provider in role.cascade_first:
            raise _unknown(role, text, roles, "a cascade has one first stage and one model")
        return ModelSpec(
            role.name,
            rest.provider,
            rest.model,
            text,
            first=first,
            inner=rest.inner,
            old_spelling=rest.old_spelling,
            old_prefix=rest.old_prefix,
        )
    stage = _stage(role, text, text, roles)
    if stage is not None:
        return stage
    if role.takes is not None:
        try:
            taken = _parse(roles[role.takes], text, roles)
        except ConfigError as exc:
            if "no model name" in str(exc) or "takes no model" in str(exc):
                raise
            raise _unknown(role, text, roles, _provider_of(text)) from None
        return ModelSpec(role.name, taken.provider, taken.model, text, inner=taken)
    raise _unknown(role, text, roles, _provider_of(text))


def _provider_of(text: str) -> str:
    """What an unknown spec's provider is, for the error."""
    head = text.partition("/")[0].strip()
    return f"unknown model provider {head!r}"


def parse_in(roles: dict[str, Role], role: str, text: str, *, warn: bool = True) -> ModelSpec:
    """Parse ``text`` as a spec of ``role`` among ``roles`` (see the module docstring); the
    public form is :func:`~citegraph.models.parse_spec` over the registry.

    Raises:
        ConfigError: An unknown role, provider or form; the message lists the role's forms.
    """
    if role not in roles:
        raise ConfigError(f"unknown model role {role!r}; roles: {', '.join(roles)}")
    parsed = _parse(roles[role], text, roles)
    if warn and parsed.any_old_spelling:
        warnings.warn(
            f"{role} spec {text.strip()!r} uses the old spelling: write {parsed.canonical!r}",
            SpecSpellingWarning,
            stacklevel=4,
        )
    return parsed
