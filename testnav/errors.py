"""One exception type for mistakes a user can fix, so the entry point can print one line and exit non-zero."""


class UserError(Exception):
    """A bad value supplied by the user: the message names it and what is valid."""
