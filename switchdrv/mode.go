package switchdrv

import (
	"errors"
	"fmt"

	"github.com/fabricctl/fabricctl/intent"
)

// ErrModeUnsupported is what a compiler refuses a policy.mode its
// platform's configuration model cannot express with (check reports the
// same fabric as FC106 or FC162 before anything compiles).
var ErrModeUnsupported = errors.New("the platform cannot express this RoCE mode")

// ModeUnsupported returns the refusal of mode m on a platform, with why
// (the compiler's Compile wraps it with the switch's name and platform).
func ModeUnsupported(m intent.RoCEMode, why string) error {
	return fmt.Errorf("policy.mode %s: %s: %w", m, why, ErrModeUnsupported)
}
