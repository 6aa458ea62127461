"""The one exception a broken submission raises; its message is shown to the agent."""


class InvalidSubmission(ValueError):
    """The submission cannot be scored; the message says exactly why."""
