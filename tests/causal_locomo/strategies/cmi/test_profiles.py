"""One profile per protocol: CMI's defaults, none of which a protocol refuses."""

from __future__ import annotations

from cmi_inspect.causal_locomo.protocol import PROTOCOLS
from cmi_inspect.causal_locomo.strategies.cmi import INTERVENTION_SCORERS, PROFILES, RISK_FILTERS


def test_every_protocol_has_a_profile_of_known_choices():
    assert set(PROFILES) == set(PROTOCOLS)
    for protocol, profile in PROFILES.items():
        assert profile.protocol == protocol
        assert profile.intervention in INTERVENTION_SCORERS and profile.risk_filter in RISK_FILTERS


def test_paper_is_the_reference_and_blind_is_label_free():
    paper, blind = PROFILES["paper"], PROFILES["blind"]
    assert (paper.intervention, paper.risk_filter, paper.embedder, paper.proposal.name) == (
        "gold",
        "label",
        "hashing",
        "hybrid",
    )
    assert (blind.intervention, blind.risk_filter, blind.embedder, blind.proposal.name) == (
        "evidence",
        "evidence",
        "e5",
        "relevance",
    )
    assert blind.proposal.recency == 0.0 < paper.proposal.recency


def test_a_default_choice_reads_nothing_its_protocol_hides():
    for name, profile in PROFILES.items():
        PROTOCOLS[name].refuse(INTERVENTION_SCORERS[profile.intervention].refused_under_blind)
        PROTOCOLS[name].refuse(RISK_FILTERS[profile.risk_filter].refused_under_blind)
