"""The policy model: observation features, the in-context cell predictor, the network and
its structured action distributions."""

from jaxarc.agents.model.distributions import (
    ActionDistribution,
    BboxDistribution,
    MaskDistribution,
    PointDistribution,
)
from jaxarc.agents.model.policy import (
    AbstractCanvasPolicy,
    AbstractPolicy,
    ConvPolicy,
    PolicyConfig,
    UniformPolicy,
    make_policy,
)
from jaxarc.agents.model.predictor_rule import PredictorRulePolicy, predictor_rule_policy
from jaxarc.agents.model.tempered import TemperedPolicy, tempered

__all__ = [
    "AbstractCanvasPolicy",
    "AbstractPolicy",
    "ActionDistribution",
    "BboxDistribution",
    "ConvPolicy",
    "MaskDistribution",
    "PointDistribution",
    "PolicyConfig",
    "PredictorRulePolicy",
    "TemperedPolicy",
    "UniformPolicy",
    "make_policy",
    "predictor_rule_policy",
    "tempered",
]
