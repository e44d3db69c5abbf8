"""The intervals and quantiles the pages give every figure with."""

from ..analysis.aggregate import percentiles, quantile_bounds
from ..analysis.cost import se_mean, se_quantile, se_share
from ..analysis.margin import Z95, binomial_se, share_interval, wilson, within_noise

__all__ = ["Z95", "binomial_se", "percentiles", "quantile_bounds", "se_mean", "se_quantile",
           "se_share", "share_interval", "wilson", "within_noise"]
