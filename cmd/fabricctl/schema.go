package main

import (
	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
)

func newSchemaCmd(d *deps) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the intent format (for editors)",
		Long: `Print the JSON Schema of the intent file format. Save it and point
yaml-language-server at it for validation and completion in your editor:

  fabricctl schema > fabricctl.schema.json
  # first line of fabric.yaml:
  # yaml-language-server: $schema=./fabricctl.schema.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := intent.Schema()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(append(b, '\n'))
			return err
		},
	}
}
