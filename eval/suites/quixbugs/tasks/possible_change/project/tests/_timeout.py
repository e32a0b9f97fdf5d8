"""Per-case time limit for the QuixBugs tests: a buggy program may loop forever."""
import contextlib
import signal


@contextlib.contextmanager
def case_time_limit(seconds=2):
    """Raise TimeoutError in the main thread if the block runs longer than `seconds`."""

    def on_alarm(signum, frame):
        raise TimeoutError(f"this case ran longer than {seconds} s: an infinite loop?")

    previous_handler = signal.signal(signal.SIGALRM, on_alarm)
    previous_timer = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler if previous_handler is not None else signal.SIG_DFL)
        if previous_timer[0] > 0:
            signal.setitimer(signal.ITIMER_REAL, *previous_timer)
