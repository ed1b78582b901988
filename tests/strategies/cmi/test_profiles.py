"""One profile per protocol: CMI's defaults, and what a label-free protocol refuses."""

from __future__ import annotations

import pytest
from cmi_inspect.strategies.cmi import INTERVENTION_SCORERS, PROFILES, RISK_FILTERS, BlindProtocolError
from cmi_inspect.view import PROTOCOLS


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
    assert not paper.label_free and blind.label_free
    assert blind.proposal.recency == 0.0 < paper.proposal.recency


def test_a_default_choice_reads_nothing_its_protocol_hides():
    for profile in PROFILES.values():
        profile.allow(INTERVENTION_SCORERS[profile.intervention].refused_under_blind)
        profile.allow(RISK_FILTERS[profile.risk_filter].refused_under_blind)


def test_allow_refuses_only_under_a_label_free_protocol():
    PROFILES["paper"].allow("reads labels")
    PROFILES["blind"].allow(None)
    with pytest.raises(BlindProtocolError, match="^reads labels$"):
        PROFILES["blind"].allow("reads labels")
