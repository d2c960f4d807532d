"""Training-loop callbacks (Zeus's ``zeus.callback``): ``Callback``, whose hooks do nothing, and ``CallbackSet``,
which calls each hook on several callbacks in order."""

from __future__ import annotations

from typing import Any, Iterable


class Callback:
    """Base class of training-loop callbacks. Every hook does nothing; subclasses override the ones they need."""

    def on_train_begin(self) -> None:
        """Called when training begins."""

    def on_train_end(self) -> None:
        """Called when training ends."""

    def on_epoch_begin(self) -> None:
        """Called at the start of each epoch."""

    def on_epoch_end(self) -> None:
        """Called at the end of each epoch."""

    def on_step_begin(self) -> None:
        """Called at the start of each training step."""

    def on_step_end(self) -> None:
        """Called at the end of each training step."""

    def on_evaluate(self, metric: float) -> None:
        """Called after evaluation with its metric."""

    def on_instruction_begin(self, name: str) -> None:
        """Called before an instruction (e.g. forward) named ``name``."""

    def on_instruction_end(self, name: str) -> None:
        """Called after an instruction named ``name``."""


class CallbackSet(Callback):
    """Calls every hook on each of ``callbacks``, in order."""

    def __init__(self, callbacks: Iterable[Callback]) -> None:
        self.callbacks = list(callbacks)

    def _each(self, hook: str, *args: Any) -> None:
        for callback in self.callbacks:
            getattr(callback, hook)(*args)

    def on_train_begin(self) -> None:
        self._each("on_train_begin")

    def on_train_end(self) -> None:
        self._each("on_train_end")

    def on_epoch_begin(self) -> None:
        self._each("on_epoch_begin")

    def on_epoch_end(self) -> None:
        self._each("on_epoch_end")

    def on_step_begin(self) -> None:
        self._each("on_step_begin")

    def on_step_end(self) -> None:
        self._each("on_step_end")

    def on_evaluate(self, metric: float) -> None:
        self._each("on_evaluate", metric)

    def on_instruction_begin(self, name: str) -> None:
        self._each("on_instruction_begin", name)

    def on_instruction_end(self, name: str) -> None:
        self._each("on_instruction_end", name)
