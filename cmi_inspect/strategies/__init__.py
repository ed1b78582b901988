"""Every memory strategy by name: the one list that the run, the report and the tests read.

The order is the paper's Table 1 (CMI first); CMI's ablations are
``cmi_inspect.strategies.cmi.ABLATIONS``. Each strategy's ``@solver`` lives in
the repository's ``solvers/`` package under the same name.
"""

from cmi_inspect.strategies.base import MemoryStrategy
from cmi_inspect.strategies.cmi import CMI
from cmi_inspect.strategies.full_history import FullHistory
from cmi_inspect.strategies.graph import GraphMemory
from cmi_inspect.strategies.no_memory import NoMemory
from cmi_inspect.strategies.reflection import ReflectionMemory
from cmi_inspect.strategies.summary import SummaryMemory
from cmi_inspect.strategies.vector import VectorMemory

STRATEGIES: dict[str, type[MemoryStrategy]] = {
    s.name: s
    for s in (
        CMI,
        ReflectionMemory,
        VectorMemory,
        GraphMemory,
        SummaryMemory,
        FullHistory,
        NoMemory,
    )
}
