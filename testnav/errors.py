"""One exception type for mistakes a user can fix, so the entry point can print one line and exit non-zero."""


class UserError(Exception):
    """A bad value supplied by the user: the message names it and what is valid."""


class BelowThreshold(Exception):
    """A robustness gate that failed (stage=query with query.min_accuracy, Tester.assert_robust):
    the message is the one line that names the query, its estimate and the threshold. The run's
    outputs are kept (the report is what a failed CI job shows); the exit status is non-zero."""


def note(message: str) -> None:
    """One line for the person running testnav: something was changed on their behalf (a model
    switched to eval mode, channels-last images transposed). Through logging, so Hydra's log and
    a notebook show it; with logging unconfigured Python prints the bare line on stderr."""
    import logging

    logging.getLogger("testnav").warning(message)
