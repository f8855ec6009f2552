package cli

import (
	"github.com/spf13/cobra"
)

func (a *app) imagesCmd() *cobra.Command    { return &cobra.Command{Use: "images", Hidden: true} }
func (a *app) reportCmd() *cobra.Command    { return &cobra.Command{Use: "report", Hidden: true} }
func (a *app) compareCmd() *cobra.Command   { return &cobra.Command{Use: "compare", Hidden: true} }
func (a *app) finalReport(dir string) error { return nil }
