"""The CLI's two rich consoles (stdout for results, stderr for errors and progress), the one
helper that makes untrusted text safe to print, and the command line as run directories record
it; :mod:`citegraph.cli._console` gives them to commands.

Any text a command prints may come from outside (a model's reply, a server's error, a file, a
path given on the command line), so the consoles read no rich markup or emoji codes unless a
call asks for them (``markup=True``, with every untrusted part passed through
:func:`markup_escaped`), and every piece of text they write goes through :func:`shown`: terminal
control characters (ESC sequences: hyperlinks, title changes, cursor moves; the other C0 and C1
controls but newline and tab) are written as visible ``\\x1b`` escapes and lone surrogates as
U+FFFD, so no text can drive the terminal or stop a print.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterable
from typing import Any

from rich.console import (
    Console,
    ConsoleOptions,
    HighlighterType,
    JustifyMethod,
    OverflowMethod,
    RenderableType,
)
from rich.markup import escape
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from citegraph.io import json_text, printable, redact_args


def shown(value: object) -> str:
    """``str(value)`` safe to write to a terminal: a CRLF becomes a newline, each other control
    character (ESC, CR, BEL, backspace, C1...) its visible ``\\xNN`` escape, each lone surrogate
    U+FFFD. Rich markup in it is left as it is (print it with markup off, as the CLI's consoles
    do by default, or use :func:`markup_escaped` / :func:`literal`)."""
    return printable(str(value))


#: What JSON leaves raw that a terminal may read as a control: DEL and the C1 controls.
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f]")


def shown_json(value: object, *, indent: int | None = 2) -> str:
    """``value`` as JSON for a terminal: :func:`~citegraph.io.json_text` (controls below
    U+0020 and lone surrogates escaped by JSON) with DEL and C1 controls written as their
    ``\\u00XX`` escapes too; ``json.loads`` reads it back unchanged."""
    text = json_text(value, indent=indent)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def markup_escaped(value: object) -> str:
    """``value`` as :func:`shown` writes it, escaped for a rich markup string (``[`` read as
    text): for an untrusted part of a line printed with ``markup=True``."""
    return escape(shown(value))


def literal(value: object, style: str = "") -> Text:
    """``value`` as a rich :class:`~rich.text.Text` (never read as markup) after :func:`shown`:
    for table cells, status lines and other renderables that would read a string as markup."""
    return Text(shown(value), style=style)


class SafeConsole(Console):
    """A rich console that reads no markup or emoji codes unless asked (``markup=True``) and
    writes every piece of text through :func:`shown`: strings before they are laid out, and the
    text of every rendered segment (a net for renderables built elsewhere); rich's own control
    segments (cursor moves of a live display) pass unchanged."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        kwargs.setdefault("emoji", False)
        super().__init__(**kwargs)

    def render_str(
        self,
        text: str,
        *,
        style: str | Style = "",
        justify: JustifyMethod | None = None,
        overflow: OverflowMethod | None = None,
        emoji: bool | None = None,
        markup: bool | None = None,
        highlight: bool | None = None,
        highlighter: HighlighterType | None = None,
    ) -> Text:
        """Rich's ``render_str`` of ``shown(text)``."""
        return super().render_str(
            shown(text),
            style=style,
            justify=justify,
            overflow=overflow,
            emoji=emoji,
            markup=markup,
            highlight=highlight,
            highlighter=highlighter,
        )

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        """Rich's segments of ``renderable``, each one's text through :func:`shown`."""
        for segment in super().render(renderable, options):
            text = segment.text if segment.control else shown(segment.text)
            yield segment if text is segment.text else Segment(text, segment.style)


console = SafeConsole()
err_console = SafeConsole(stderr=True)


def command_line() -> str:
    """The command being run, shell-quoted, as run directories record it: the value of every
    ``--...url`` option and every URL redacted (:func:`citegraph.io.redact_args`)."""
    return " ".join(shlex.quote(a) for a in ["citegraph", *redact_args(sys.argv[1:])])
