"""NLI cross-encoders served by vLLM's classify endpoint (``vllm/<model>`` NLI specs).

One request per batch of pairs::

    POST <server root>/classify
    {"model": <model>, "input": ["<premise><sep><hypothesis>", ...]}

vLLM answers ``data[i] = {"index", "label", "probs", "num_classes"}``: ``probs`` the softmax over
the model's classes in index order, ``label`` the name of the argmax. ``/classify`` takes single
texts, so a pair is sent as one text joined by the tokenizer's separator token, which the server's
tokenizer turns into the separator id: ``[SEP]`` (BERT, DeBERTa, ELECTRA; the default) or
``</s></s>`` (RoBERTa, BART: chosen when the model name says so); ``pair_separator`` overrides it.
The server adds ``[CLS]``/``<s>`` and the final separator itself, so the ids are those of the
local pair encoding, except that BERT-style token type ids stay 0 for the hypothesis (RoBERTa and
DeBERTa-v3 have none).

The class of each kind is read, as the local backends read it, from the labels by name
(:func:`~citegraph.models.find_entailment_index`, :func:`~citegraph.models.find_three_way_indices`):
from ``labels`` (the model's ``id2label`` in index order) when given, else from the model's
``config.json`` (a local model folder of that name, or the Hugging Face hub through
``huggingface_hub``); ``entailment_index`` / ``class_indices`` override them as locally. Every
answer's ``label`` is checked against those names, so a server running another model fails
loudly instead of swapping classes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError, ModelError, ResponseFormatError
from citegraph.models._nli_protocol import NLIPair, NLIVerdict
from citegraph.models.nli._hf import find_entailment_index
from citegraph.models.nli._nli3_probs import NLIProbs, find_three_way_indices, normalise_label
from citegraph.models.server import Endpoint, Refused, ServedModel, server_root

__all__ = ["ServerNLI", "ServerNLI3", "default_pair_separator", "read_labels"]

_HINT = (
    "serve the NLI model as a classifier, e.g. 'vllm serve <model> --runner pooling' "
    "(older vLLM: --task classify), and check --base-url"
)


def default_pair_separator(model: str) -> str:
    """``"</s></s>"`` for RoBERTa- and BART-style models (by name), else ``"[SEP]"``."""
    lowered = model.lower()
    return "</s></s>" if ("roberta" in lowered or "bart" in lowered) else "[SEP]"


def read_labels(model: str) -> dict[int, str]:
    """The model's ``id2label``, from ``<model>/config.json`` or the hub's copy.

    Raises:
        ConfigError: Neither can be read; the message says how to give the labels.
    """
    local = Path(model).expanduser() / "config.json"
    try:
        if local.is_file():
            text = local.read_text(encoding="utf-8")
        else:
            from huggingface_hub import hf_hub_download

            text = Path(hf_hub_download(model, "config.json")).read_text(encoding="utf-8")
        id2label = json.loads(text)["id2label"]
        return {int(i): str(v) for i, v in id2label.items()}
    except Exception as exc:  # no hub, no file, no id2label...
        raise ConfigError(
            f"cannot read the class labels of {model!r} ({type(exc).__name__}: {exc}); pass "
            "labels=(<label of class 0>, ...) or the class indices (entailment_index / "
            "class_indices)"
        ) from exc


class _ServerClassifier(ServedModel):
    """Class probabilities of premise / hypothesis pairs from ``/classify``."""

    def __init__(
        self,
        model: str,
        *,
        provider: str,
        endpoint: Endpoint | None,
        batch_size: int,
        labels: Sequence[str] | None,
        pair_separator: str | None,
    ) -> None:
        if provider != "vllm":
            raise ConfigError(f"NLI by server needs a 'vllm/<model>' spec, not {provider!r}")
        super().__init__(
            model, provider=provider, endpoint=endpoint, batch_size=batch_size, missing_hint=_HINT
        )
        self._given_labels = dict(enumerate(labels)) if labels is not None else None
        self._separator = pair_separator or default_pair_separator(model)
        self._classes = 1  # the fewest classes an answer may have (class indices given)

    @property
    def name(self) -> str:
        """``"vllm/<model>"``."""
        return self._items.client.name

    def _labels(self) -> dict[int, str]:
        if self._given_labels is None:
            self._given_labels = read_labels(self._items.client.model)
        return self._given_labels

    async def _probs(self, pairs: Sequence[NLIPair], *, indices: bool) -> list[list[float]]:
        """The class probabilities of each pair, in the model's class order (the labels are
        read first unless the class indices were given: ``indices``)."""
        labels = self._given_labels if indices else self._labels()
        url = f"{server_root(self._items.client.base_url)}/classify"
        params = {"model": self._items.client.model}
        texts = [{"input": f"{p.premise}{self._separator}{p.hypothesis}"} for p in pairs]
        found = await self._items.results(
            url,
            texts,
            params=params,
            body=lambda batch: {**params, "input": [item["input"] for item in batch]},
            parse=lambda data, batch: self._parse(data, batch, labels, url),
        )
        for i, result in enumerate(found):
            if isinstance(result, Refused):
                raise ModelError(f"{self.name} refused pair {i}: {result.reason}")
        return found

    def _parse(
        self,
        data: dict[str, Any],
        batch: list[dict[str, Any]],
        labels: dict[int, str] | None,
        url: str,
    ) -> list[Any]:
        where = self._items.where(url)
        rows = data.get("data")
        if not isinstance(rows, list) or len(rows) != len(batch):
            raise ResponseFormatError(f"{where} answered without one result per input", url=url)
        out = []
        for row in sorted(rows, key=lambda r: r.get("index", 0) if isinstance(r, dict) else 0):
            probs = row.get("probs") if isinstance(row, dict) else None
            if (
                not isinstance(probs, list)
                or len(probs) != (len(labels) if labels else max(len(probs), self._classes))
                or not all(isinstance(p, int | float) for p in probs)
            ):
                raise ResponseFormatError(
                    f"{where} answered no 'probs' over the model's classes "
                    f"{labels or self._classes}: {str(row)[:200]}",
                    url=url,
                )
            label = row.get("label")
            best = labels[probs.index(max(probs))] if labels else None
            if (
                best is not None
                and isinstance(label, str)
                and normalise_label(label) != normalise_label(best)
            ):
                raise ResponseFormatError(
                    f"{where} names class {label!r} where the labels {labels} say {best!r}: "
                    "is the server running another model?",
                    url=url,
                )
            out.append([float(p) for p in probs])
        return out


class ServerNLI(_ServerClassifier):
    """An :class:`~citegraph.models.NLIModel` on a served NLI cross-encoder.

    Entailed iff the entailment class is the argmax (default), or iff its probability is >=
    ``threshold``; ``score`` is that probability, as :class:`~citegraph.models.HFClassifierNLI`.

    Args:
        model: The model name the server knows (a hub id or the folder it was served from).
        provider: ``"vllm"``.
        endpoint: The server (default URL ``http://localhost:8000/v1``; ``/classify`` is
            posted to its root), its client's limits and the response cache.
        batch_size: Pairs per request.
        labels: The model's class labels in index order (default: read, see the module).
        entailment_index: The entailment class (default: found by label name).
        threshold: Decide by ``P(entailment) >= threshold`` instead of argmax.
        pair_separator: Joins premise and hypothesis (default: see the module).

    Raises:
        ConfigError: Bad options, labels that cannot be read or mapped.
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str = "vllm",
        endpoint: Endpoint | None = None,
        batch_size: int = 16,
        labels: Sequence[str] | None = None,
        entailment_index: int | None = None,
        threshold: float | None = None,
        pair_separator: str | None = None,
    ) -> None:
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"threshold must be in [0, 1], got {threshold}")
        super().__init__(
            model,
            provider=provider,
            endpoint=endpoint,
            batch_size=batch_size,
            labels=labels,
            pair_separator=pair_separator,
        )
        self._entailment_index = entailment_index
        self._threshold = threshold

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """One verdict per pair, in order.

        Raises:
            ModelError: The server refused a pair.
            ClientError: The server has no ``/classify`` route (404).
            ResponseFormatError: An answer that is not a classification of the model's labels.
        """
        if not pairs:
            return []
        index = self._entailment_index
        if index is None:
            try:
                index = find_entailment_index(self._labels())
            except ModelError as exc:
                raise ConfigError(str(exc)) from exc
        self._classes = index + 1
        verdicts = []
        given = self._entailment_index is not None
        for probs in await self._probs(pairs, indices=given):
            p = probs[index]
            if self._threshold is None:
                entailed = probs.index(max(probs)) == index
            else:
                entailed = p >= self._threshold
            verdicts.append(NLIVerdict(entailed=entailed, score=p, source=self.name))
        return verdicts


class ServerNLI3(_ServerClassifier):
    """An :class:`~citegraph.models.NLI3Model` on a served three-way NLI cross-encoder.

    Args:
        model, provider, endpoint, batch_size, labels, pair_separator: As :class:`ServerNLI`.
        class_indices: ``(contradiction, neutral, entailment)`` class indices (default: found
            by label name).

    Raises:
        ConfigError: Bad options, labels that cannot be read or mapped.
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str = "vllm",
        endpoint: Endpoint | None = None,
        batch_size: int = 16,
        labels: Sequence[str] | None = None,
        class_indices: tuple[int, int, int] | None = None,
        pair_separator: str | None = None,
    ) -> None:
        if class_indices is not None and sorted(class_indices) != [0, 1, 2]:
            raise ConfigError(f"class_indices must be a permutation of 0, 1, 2; {class_indices}")
        super().__init__(
            model,
            provider=provider,
            endpoint=endpoint,
            batch_size=batch_size,
            labels=labels,
            pair_separator=pair_separator,
        )
        self._indices = class_indices

    async def probabilities(self, pairs: Sequence[NLIPair]) -> list[NLIProbs]:
        """One vector per pair, in CONNER's order.

        Raises:
            As :meth:`ServerNLI.entails`.
        """
        if not pairs:
            return []
        c, n, e = self._indices or find_three_way_indices(self._labels())
        self._classes = 3
        return [
            NLIProbs(contradiction=p[c], neutral=p[n], entailment=p[e])
            for p in await self._probs(pairs, indices=self._indices is not None)
        ]

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """Entailed iff entailment is the argmax (as :class:`~citegraph.models.HFNLI3`)."""
        return [
            NLIVerdict(entailed=p.label == 2, score=p.entailment, source=self.name)
            for p in await self.probabilities(pairs)
        ]
