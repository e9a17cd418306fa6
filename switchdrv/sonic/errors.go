package sonic

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Texts of sonic-gnmi's refusals (gnmi_server/server.go, Set): the
// telemetry container runs with gnmi_native_write=false
// (telemetry/telemetry.go), so its Set on origin sonic-db fails with one of
// these, codes.Unimplemented.
var readOnlyTexts = []string{"GNMI native write is disabled", "GNMI is in read-only mode"}

// gcuPFCWDRefusal is GCU's refusal of a PFC_WD change on an ASIC its field
// validators do not know (sonic-utilities generic_config_updater/
// gu_common.py validate_field_operation).
const gcuPFCWDRefusal = "Modification of PFC_WD table is illegal"

// ErrWritesDisabled says the gNMI server is SONiC's read-only telemetry
// container.
var ErrWritesDisabled = fmt.Errorf("writes are disabled on this gNMI server; use the gnmi container")

// writeRoleTexts are sonic-gnmi's refusals (202505 on: gnmi_server/
// server.go authenticate, PR #335) of a Set by a client authenticated by
// certificate whose role in CONFIG_DB GNMI_CLIENT_CERT is not
// gnmi_config_db_readwrite.
var writeRoleTexts = []string{"does not have write access, target gnmi_", "does not have access, target gnmi_"}

// ErrNoWriteRole says the switch authenticated fabricctl's certificate
// without a role that may write CONFIG_DB.
var ErrNoWriteRole = fmt.Errorf("this gNMI server lets fabricctl's client certificate read, not write")

// ExplainSetError implements switchdrv.SetErrorExplainer: it says what the
// known SONiC refusals mean and what to do, keeping the device's text.
func (Platform) ExplainSetError(err error) error {
	if err == nil {
		return nil
	}
	msg := status.Convert(err).Message()
	if status.Code(err) == codes.Unimplemented {
		for _, t := range readOnlyTexts {
			if strings.Contains(msg, t) {
				return fmt.Errorf("%w (the telemetry container runs with gnmi_native_write=false; point the switch's address at the gnmi container's port): %w", ErrWritesDisabled, err)
			}
		}
	}
	for _, t := range writeRoleTexts {
		if strings.Contains(msg, t) {
			return fmt.Errorf("%w: since SONiC 202505 a client authenticated by certificate needs the role gnmi_config_db_readwrite in CONFIG_DB GNMI_CLIENT_CERT|<certificate CN> (and 202511's gnmi container turns certificate authentication on when GNMI|gnmi user_auth is unset); give the certificate that role, or log in with a password: %w", ErrNoWriteRole, err)
		}
	}
	if strings.Contains(msg, gcuPFCWDRefusal) {
		return fmt.Errorf("SONiC's config updater refuses PFC watchdog changes on this switch: its field validators (sonic-utilities generic_config_updater/gcu_field_operation_validators.conf.json) do not list this ASIC/HWSKU or this image's branch; configure the watchdog with the pfcwd CLI or set policy.watchdog.enabled: false: %w", err)
	}
	return err
}
