package check

import (
	"fmt"

	"github.com/fabricctl/fabricctl/intent"
)

// LineRateTypo returns an error when r is below the slowest RoCE line rate,
// in FC127's words: a flag (headroom --speed 400M) is held to the rule the
// intent is held to.
func LineRateTypo(r int64) error {
	if r <= 0 || r >= minLineRate {
		return nil
	}
	return fmt.Errorf("%s is %s, below 1G: too slow for RoCE and surely a unit typo; did you mean %s? (FC127)",
		intent.FormatRate(r), spelledRate(r), didYouMean(r))
}
