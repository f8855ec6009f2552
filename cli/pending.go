package cli

import (
	"github.com/spf13/cobra"
)

func (a *app) imagesCmd() *cobra.Command { return &cobra.Command{Use: "images", Hidden: true} }
