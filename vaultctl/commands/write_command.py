"""What makes a function a write command: the options every write takes, derived from its params.

A write method's params say which steering fields it has: every :class:`WriteParams` takes
``vault``, ``dry_run`` and ``log``; an :class:`EditParams` also ``expected_sha``; a
:class:`TwoStepParams` also ``confirm`` and ``fingerprint``. :func:`write_command` reads that from
the method's spec and adds the matching options (``--vault``, ``--dry-run``, ``--expected-sha``,
``--log``, ``--confirm``, ``--fingerprint``, ``--json``) to the command, so no write command can
leave one out or spell one differently, and a steering field added to the protocol reaches every
write command at once. The command receives them as one :class:`WriteFlags`, which also runs the
call, prints the receipt and composes the confirm command a preview asks for, carrying the
``--vault`` and ``--log`` the preview was given so the confirmed write is the one previewed.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar

import typer

from protocol.methods.writes import EditParams, TwoStepParams, WriteParams
from protocol.schema import field_help as doc
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session
from vaultctl.commands.receipts import confirm_command, exit_if_not_logged, log_event, receipt_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.methods.receipts import Outcome, WriteReceipt
    from protocol.methods.spec import MethodSpec

P = TypeVar("P", bound=WriteParams)

DryRunOpt = Annotated[bool, typer.Option("--dry-run", help=doc(WriteParams, "dry_run"))]
ShaOpt = Annotated[str | None, typer.Option("--expected-sha", help=doc(EditParams, "expected_sha"))]
LogOpt = Annotated[str | None, typer.Option("--log", help=doc(WriteParams, "log") + ' As JSON: {"type","source","note",...}.')]
ConfirmOpt = Annotated[bool, typer.Option("--confirm", help=doc(TwoStepParams, "confirm"))]
FingerprintOpt = Annotated[str | None, typer.Option("--fingerprint", help=doc(TwoStepParams, "fingerprint"))]

#: The options of every write, in the order ``--help`` lists them: (parameter, annotation,
#: default, the params class that brings the field). ``vault`` and ``as_json`` are not params
#: fields of their own kind: the vault is resolved before the call, --json shapes the output.
_OPTIONS: tuple[tuple[str, Any, Any, type[WriteParams]], ...] = (
    ("vault", VaultOpt, None, WriteParams),
    ("dry_run", DryRunOpt, False, WriteParams),
    ("expected_sha", ShaOpt, None, EditParams),
    ("log", LogOpt, None, WriteParams),
    ("confirm", ConfirmOpt, False, TwoStepParams),
    ("fingerprint", FingerprintOpt, None, TwoStepParams),
    ("as_json", JsonOpt, False, WriteParams),
)

#: Each write command (as typer is given it) and its method: how a test finds the write commands
#: in the built tree and holds their options to their params.
WRITE_SPECS: dict[Callable[..., None], MethodSpec[Any, Any]] = {}


def _takes(params: type[WriteParams], name: str, owner: type[WriteParams]) -> bool:
    """Whether ``params`` has the shared option's field: by its base class, or declared itself
    (a two-step change of one file compares and swaps as an edit does: ``expected_sha``)."""
    return issubclass(params, owner) or name in params.__struct_fields__


def steering_fields(params: type[WriteParams]) -> frozenset[str]:
    """The params fields a write command of ``params`` takes from the shared options."""
    return frozenset(name for name, _, _, owner in _OPTIONS if name != "as_json" and _takes(params, name, owner))


@dataclass(frozen=True, slots=True)
class WriteFlags(Generic[P]):
    """The shared options as one write command was given them, bound to its method."""

    spec: MethodSpec[P, WriteReceipt[Any]]
    vault: str | None
    dry_run: bool
    log: str | None  #: as typed, so the confirm command can carry it
    as_json: bool
    expected_sha: str | None = None
    confirm: bool = False
    fingerprint: str | None = None

    def fields(self, vault: str | None) -> dict[str, Any]:
        """The steering fields of the params, with ``vault`` as :func:`pick_vault` resolved it."""
        given = {
            "vault": vault,
            "dry_run": self.dry_run,
            "expected_sha": self.expected_sha,
            "log": log_event(self.log),
            "confirm": self.confirm,
            "fingerprint": self.fingerprint,
        }
        return {k: v for k, v in given.items() if k in steering_fields(self.spec.params)}

    def confirm_command(self, *words: str) -> str:
        """The command that confirms this preview: the words given, then the --vault and --log this
        call had (the fingerprint binds the plan, and the log line is part of it)."""
        return confirm_command(*words, *(("--vault", self.vault) if self.vault else ()), *(("--log", self.log) if self.log else ()))

    def run(
        self,
        build: Callable[[dict[str, Any]], P],
        *words: str,
        text: Callable[[Outcome, str | None], str] = receipt_text,
    ) -> None:
        """Call the method with the params ``build`` makes from the steering fields, print the
        receipt (``text``; a preview ends with the confirm command of ``words``), and exit 1 when
        the write was applied but its log line was not."""
        with session() as c:
            params = build(self.fields(pick_vault(c, self.vault)))
            result = call(self.spec, params, client=c)
        confirm = self.confirm_command(*words) if words else None
        emit(result, self.as_json, lambda r: text(r, confirm))
        exit_if_not_logged(result)


def _evaluated(fn: Callable[..., None], parameter: inspect.Parameter) -> inspect.Parameter:
    """``parameter`` with its annotation evaluated in ``fn``'s module, as typer needs it. Only the
    command's own options are evaluated: ``flags``'s annotation is for the type checker alone."""
    annotation = parameter.annotation
    if isinstance(annotation, str):
        annotation = eval(annotation, fn.__globals__)  # the module's own annotation text, as typing evaluates it
    return parameter.replace(annotation=annotation)


def write_command(spec: MethodSpec[P, WriteReceipt[Any]]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Make ``fn`` the command of the write method ``spec``.

    ``fn`` declares its own arguments and options, and a parameter ``flags`` that receives the
    shared ones as a :class:`WriteFlags`. The command typer builds has ``fn``'s parameters followed
    by the shared options the method's params call for."""
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, annotation, default, owner in _OPTIONS
        if _takes(spec.params, name, owner)
    ]

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(fn)
        if "flags" not in signature.parameters:
            raise TypeError(f"{fn.__name__} takes no 'flags' parameter for its write options")
        own = [_evaluated(fn, p) for p in signature.parameters.values() if p.name != "flags"]
        clash = {p.name for p in own} & {p.name for p in shared}
        if clash:
            raise TypeError(f"{fn.__name__} declares {', '.join(sorted(clash))} itself; write_command adds them")

        @functools.wraps(fn)
        def command(**given: Any) -> None:
            shared_given = {p.name: given.pop(p.name) for p in shared}
            log_event(shared_given["log"])  # a malformed --log is a usage error before anything runs
            fn(**given, flags=WriteFlags(spec, **shared_given))

        parameters = [*own, *shared]
        command.__signature__ = signature.replace(parameters=parameters, return_annotation=None)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
        WRITE_SPECS[command] = spec
        return command

    return register
