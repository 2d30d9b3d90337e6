"""The typed contract in tests: calls through vaultctl's own client, refusals by error code.

A test that is not about frames speaks to its daemon the way every real client does: vaultctl's
:func:`~vaultctl.client.connect` opens the session (the socket's folder and peer checked, ``hello``
on the channel asked for), its :class:`~vaultctl.client.Client` sends a spec's params Struct,
the reply is decoded into the spec's result type as :meth:`~vaultctl.client.Client.call` decodes
it (and checked to lose none of it), and a refusal arrives as a :class:`~vaultctl.client.CallError`
carrying the error's data. So a method is named by its spec, a
result is read by attribute (a receipt's outcome by its variant), and a refusal is asserted by
its :class:`~protocol.errors.ErrorCode` and :class:`~protocol.issue_codes.IssueCode`::

    receipt = typed.call(CREATE, CreateParams(path="inbox/Idea"))
    assert isinstance(receipt, Applied)
    with refused(ErrorCode.VALIDATION, IssueCode.V03) as refusal:
        typed.call(CREATE, CreateParams(path="d/amb", body="see [[Meeting Notes]]\\n"))
    assert refusal.data.issues[0].path == "d/amb.md"

:class:`~tests.support.harness.RawClient` stays for tests about frames: malformed JSON, hand-made
envelopes, bounds on a request's bytes.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
import pytest

from protocol.methods.common import Channel, Params
from protocol.methods.receipts import Applied, Preview
from protocol.methods.writes import TwoStepParams
from vaultctl.client import CallError, connect

if TYPE_CHECKING:
    from collections.abc import Iterator

    from protocol.errors import ErrorCode, ErrorData
    from protocol.issue_codes import IssueCode
    from protocol.methods.receipts import WriteReceipt
    from protocol.methods.spec import MethodSpec
    from tests.support.harness import Home
    from vaultctl.client import Client

P = TypeVar("P", bound=Params)
R = TypeVar("R")
T = TypeVar("T", bound=TwoStepParams)
D = TypeVar("D")

CLIENT_NAME = "tests"


class TypedClient:
    """A session with a test's daemon through :class:`vaultctl.client.Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def call(self, spec: MethodSpec[P, R], params: P) -> R:
        """``spec``'s result, decoded into its declared type (a refusal raises :class:`CallError`).

        The reply is decoded as :meth:`Client.call <vaultctl.client.Client.call>` decodes it, and
        must come back whole: a key the type does not declare, or a value it would not encode the
        same, fails the test. So an assertion that a result equals a Struct holds the reply to
        exactly that JSON, as a test comparing the raw dict did.
        """
        return _whole(spec, self.client.call_raw(spec.name, params))

    def call_with(self, spec: MethodSpec[Any, R], params: dict[str, Any]) -> R:
        """``spec`` called with hand-made params: for a value its params Struct cannot hold (a
        relation outside the enum, a key of the wrong type), whose refusal is what the test is about.
        The method is still named by its spec and the result decoded into its type."""
        return _whole(spec, self.client.call_raw(spec.name, params))

    def close(self) -> None:
        self.client.close()


def _whole(spec: MethodSpec[Any, R], reply: bytes) -> R:
    """``reply`` decoded into ``spec``'s result type, after checking the decode loses nothing."""
    result: R = msgspec.json.decode(reply, type=spec.result)
    sent, kept = msgspec.json.decode(reply), msgspec.json.decode(msgspec.json.encode(result))
    assert kept == sent, f"{spec.name}'s reply does not decode whole into {spec.result}: sent {sent!r}, decoded {kept!r}"
    return result


class TypedClients:
    """Opens sessions with the daemon of a home through vaultctl's own ``connect``, and closes
    them after the test. ``connect`` finds the socket the way a user's client does, from
    ``VAULTD_HOME`` and ``VAULTD_SOCKET``; they are set for the test alone."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._monkeypatch = monkeypatch
        self._open: list[TypedClient] = []

    def open(
        self,
        home: Home,
        channel: Channel = Channel.CLI,
        *,
        client_name: str = CLIENT_NAME,
        session: str | None = None,
        timeout: float | None = None,
    ) -> TypedClient:
        """A new session with the daemon of ``home`` on ``channel``, saying ``hello`` as
        ``client_name`` (an agent's session id in ``session``); each reply is awaited ``timeout``
        seconds (vaultctl's default when None)."""
        for key in ("VAULTD_HOME", "VAULTD_SOCKET"):
            self._monkeypatch.setenv(key, home.env[key])
        client = TypedClient(connect(channel, client_name=client_name, autostart=False, session=session, timeout=timeout))
        self._open.append(client)
        return client

    def close(self) -> None:
        while self._open:
            self._open.pop().close()


class Refusal:
    """What :func:`refused` caught: the error's data, set when the ``with`` block is left."""

    _data: ErrorData | None = None

    @property
    def data(self) -> ErrorData:
        assert self._data is not None, "the refusal is read inside its with block, before the call refused"
        return self._data


@contextlib.contextmanager
def refused(code: ErrorCode, issue: IssueCode | None = None) -> Iterator[Refusal]:
    """Assert that the block's call is refused with ``code`` and, when given, that the first of
    the error's issues is ``issue``; the error's data is the yielded :class:`Refusal`'s."""
    refusal = Refusal()
    with pytest.raises(CallError) as caught:
        yield refusal
    data = refusal._data = caught.value.data
    assert data.code is code, data
    if issue is not None:
        assert data.issues, data
        assert data.issues[0].code == issue, data.issues


def applied(receipt: WriteReceipt[D]) -> Applied[D]:
    """``receipt``, which must be an applied write's (any other outcome fails the test)."""
    assert isinstance(receipt, Applied), receipt
    return receipt


def previewed(receipt: WriteReceipt[D]) -> Preview[D]:
    """``receipt``, which must be a two-step operation's preview."""
    assert isinstance(receipt, Preview), receipt
    return receipt


def two_step(client: TypedClient, spec: MethodSpec[T, WriteReceipt[D]], params: T) -> tuple[Preview[D], Applied[D]]:
    """A two-step operation as a person runs it: the preview, then the confirm carrying its
    fingerprint, which must apply."""
    preview = previewed(client.call(spec, params))
    assert preview.fingerprint
    done = applied(client.call(spec, msgspec.structs.replace(params, confirm=True, fingerprint=preview.fingerprint)))
    assert done.op_id
    return preview, done
