"""The accountants entered with ``with accountant:``: one stack per thread or task.

A context variable holds the stack, so blocks entered in one thread (or
asyncio task) are never seen from another: in a server with one accountant
per user, one user's fits are never billed to another's.
"""

import contextvars

__all__ = ["enter", "leave", "context_accountant"]

_STACK: contextvars.ContextVar = contextvars.ContextVar("skdp_accountant_stack", default=())


def enter(accountant) -> None:
    """Push ``accountant`` on this context's stack."""
    _STACK.set(_STACK.get() + (accountant,))


def leave(accountant) -> None:
    """Remove the innermost entry of ``accountant`` from this context's stack."""
    stack = _STACK.get()
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is accountant:
            _STACK.set(stack[:i] + stack[i + 1:])
            break


def context_accountant():
    """The innermost accountant entered with ``with accountant:`` here, if any.

    Returns
    -------
    accountant : BudgetAccountant or None
        The innermost accountant of a ``with`` block of the current context
        (thread or asyncio task); None outside any.  Blocks entered in other
        threads are never seen.
    """
    stack = _STACK.get()
    return stack[-1] if stack else None
