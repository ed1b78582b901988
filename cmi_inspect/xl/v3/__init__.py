"""Causal-LoCoMo-XL v3: the conversation's whole memory store as the bank, poison said in
the history, and questions the conversation does not answer (docs/xl.md).

The parts, in the order a build uses them: ``params`` (fixed choices), ``slots`` (what an
answer rests on, and the edits that falsify it), ``speech`` and ``plan`` (the turns poison
adds, by channel), ``history`` (those turns said in the conversation), ``store`` (one memory
a turn), ``examples`` (labels, claims, criteria), ``build`` (order, files, manifest).
"""
