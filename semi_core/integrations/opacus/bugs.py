"""The bug zoo of :mod:`semi_core.sgd.bugs` as drop-ins of Opacus' ``DPOptimizer``.
"""

from __future__ import annotations

import torch

from semi_core.sgd.bugs import Bug

__all__ = ["install_bug"]


def install_bug(optimizer, bug: Bug | None):
    """Turn an Opacus ``DPOptimizer`` into its buggy twin (a subclass of its own class whose
    ``clip_and_accumulate`` / ``add_noise`` implement ``bug``, :mod:`semi_core.sgd.bugs`).
    ``None`` and ``sampling_rate_misreport`` (an accounting bug) leave it unchanged.

    Parameters
    ----------
    optimizer : opacus.optimizers.DPOptimizer
        The optimizer (its class is replaced in place).
    bug : Bug or None
        The bug; None = no change.

    Returns
    -------
    DPOptimizer
        The same optimizer object, now of the buggy class (or unchanged).
    """
    if bug is None or bug.misreports_accounting:
        return optimizer
    from opacus.optimizers.optimizer import (
        _check_processed_flag,
        _generate_noise,
        _mark_as_processed,
    )

    base = type(optimizer)

    def add_noise(self):
        for p in self.params:
            _check_processed_flag(p.summed_grad)
            std = self.noise_multiplier * self.max_grad_norm
            if bug.name == "noise_unscaled":
                std = self.noise_multiplier
            elif bug.name == "wrong_batch_size":
                std = std / bug.factor
            if bug.name == "noise_reused":
                cache = self.__dict__.setdefault("_semi_reused_noise", {})
                if id(p) not in cache:
                    cache[id(p)] = _generate_noise(std=std, reference=p.summed_grad,
                                                   generator=self.generator,
                                                   secure_mode=self.secure_mode)
                noise = cache[id(p)]
            else:
                noise = _generate_noise(std=std, reference=p.summed_grad,
                                        generator=self.generator, secure_mode=self.secure_mode)
            p.grad = (p.summed_grad + noise).view_as(p)
            _mark_as_processed(p.summed_grad)

    def clip_and_accumulate(self):
        if bug.name == "clip_mismatch":
            c0 = self.max_grad_norm
            self.max_grad_norm = c0 * bug.factor
            try:
                base.clip_and_accumulate(self)
            finally:
                self.max_grad_norm = c0
            return
        if bug.name != "batch_clip":
            base.clip_and_accumulate(self)
            return
        sums = []
        for p in self.params:
            _check_processed_flag(p.grad_sample)
            g = self._get_flat_grad_sample(p).to(p.dtype)
            sums.append(g.sum(0))
            _mark_as_processed(p.grad_sample)
        n = len(self.grad_samples[0])
        norm = torch.sqrt(sum((s * s).sum() for s in sums))
        factor = torch.clamp(n * self.max_grad_norm / (norm + 1e-12), max=1.0)
        for p, s in zip(self.params, sums, strict=True):
            p.summed_grad = s * factor if p.summed_grad is None else p.summed_grad + s * factor

    buggy = type(f"Buggy{base.__name__}_{bug.name}", (base,),
                 {"add_noise": add_noise, "clip_and_accumulate": clip_and_accumulate,
                  "semi_core_bug": bug})
    optimizer.__class__ = buggy
    return optimizer
