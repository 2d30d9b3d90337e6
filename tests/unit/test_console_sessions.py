"""The console's sign-in: one-time tokens, their expiry, sessions, CSRF values, bounds."""

from __future__ import annotations

from vaultctl.console.sessions import MAX_GRANTS, MAX_SESSIONS, SESSION_TTL_S, Sessions


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_token_signs_in_once() -> None:
    sessions = Sessions(Clock())
    token = sessions.grant(120, "notes")
    redeemed = sessions.redeem(token)
    assert redeemed is not None
    cookie, session = redeemed
    assert session.vault == "notes" and sessions.lookup(cookie) == session
    assert sessions.redeem(token) is None, "a used token is gone"
    assert sessions.pending_grants == 0


def test_a_token_expires_at_its_deadline_and_is_forgotten() -> None:
    clock = Clock()
    sessions = Sessions(clock)
    late, on_time = sessions.grant(120), sessions.grant(120)
    clock.now += 119.9
    assert sessions.redeem(on_time) is not None
    clock.now += 0.1  # exactly at the deadline: too late
    assert sessions.redeem(late) is None
    assert sessions.pending_grants == 0


def test_unknown_tokens_and_cookies_name_nothing() -> None:
    sessions = Sessions(Clock())
    sessions.grant(120)
    assert sessions.redeem("") is None and sessions.redeem("x" * 43) is None
    assert sessions.lookup(None) is None and sessions.lookup("") is None and sessions.lookup("nope") is None
    assert sessions.pending_grants == 1, "a wrong guess does not spend another's token"


def test_a_session_ends_after_its_lifetime_or_on_sign_out() -> None:
    clock = Clock()
    sessions = Sessions(clock)
    first = sessions.redeem(sessions.grant(120))
    second = sessions.redeem(sessions.grant(120))
    assert first is not None and second is not None
    sessions.end(first[0])
    assert sessions.lookup(first[0]) is None and sessions.lookup(second[0]) is not None
    clock.now += SESSION_TTL_S - 0.001
    assert sessions.lookup(second[0]) is not None
    clock.now += 0.001
    assert sessions.lookup(second[0]) is None


def test_the_csrf_value_must_match_exactly() -> None:
    sessions = Sessions(Clock())
    redeemed = sessions.redeem(sessions.grant(120))
    assert redeemed is not None
    session = redeemed[1]
    assert sessions.csrf_ok(session, session.csrf)
    for wrong in (None, "", session.csrf[:-1], session.csrf + "x", session.csrf.upper() if session.csrf != session.csrf.upper() else "x"):
        assert not sessions.csrf_ok(session, wrong)


def test_secrets_are_long_random_and_distinct() -> None:
    sessions = Sessions(Clock())
    tokens = {sessions.grant(120) for _ in range(MAX_GRANTS)}
    assert len(tokens) == MAX_GRANTS and all(len(t) >= 43 for t in tokens)
    redeemed = [sessions.redeem(t) for t in tokens]
    values = {r[0] for r in redeemed if r} | {r[1].csrf for r in redeemed if r}
    assert len(values) == 2 * MAX_GRANTS


def test_the_tables_are_bounded_oldest_first() -> None:
    sessions = Sessions(Clock())
    tokens = [sessions.grant(120) for _ in range(MAX_GRANTS + 1)]
    assert sessions.pending_grants == MAX_GRANTS
    assert sessions.redeem(tokens[0]) is None, "the oldest unused token went first"
    assert sessions.redeem(tokens[-1]) is not None
    cookies = []
    for _ in range(MAX_SESSIONS + 1):
        redeemed = sessions.redeem(sessions.grant(120))
        assert redeemed is not None
        cookies.append(redeemed[0])
    assert sessions.lookup(cookies[0]) is None and sessions.lookup(cookies[-1]) is not None


def test_nothing_kept_holds_a_secret() -> None:
    sessions = Sessions(Clock())
    token = sessions.grant(120)
    other = sessions.grant(120)
    redeemed = sessions.redeem(other)
    assert redeemed is not None
    kept = repr(vars(sessions))
    assert token not in kept and redeemed[0] not in kept
