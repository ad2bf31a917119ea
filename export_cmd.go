package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/internal/output"
	"github.com/zkherd/zkherd/internal/pkgerr"
	"github.com/zkherd/zkherd/subtree"
)

type exportOptions struct {
	acl bool
	out string
}

func newExportCmd(g *globalOptions) *cobra.Command {
	o := exportOptions{}
	cmd := newCommand("export PATH", "Write a znode subtree to JSON: paths, data, stat essentials and (with --acl) ACLs", "export", cobra.ExactArgs(1), func(cmd *cobra.Command, args []string) error {
		root := args[0]
		s, cs, err := g.session(cmd.Context(), "export")
		if err != nil {
			return err
		}
		defer s.Close()
		if cs.Chroot != "" {
			root = path.Clean(cs.Chroot + "/" + root)
		}
		doc, err := subtree.Export(cmd.Context(), s.Conn(), root, subtree.ExportOptions{ACL: o.acl})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return usageErr("export %s: no such node", args[0])
		case errors.Is(err, zk.ErrNoAuth):
			return usageErr("export %s: %v: its ACL denies this session (give --auth user:password)", args[0], err)
		case err != nil:
			return usageErr("export %s: %v", args[0], err)
		}
		out := cmd.OutOrStdout()
		if o.out != "" && o.out != "-" {
			f, err := os.Create(o.out)
			if err != nil {
				return usageErr("--out: %v", err)
			}
			defer f.Close()
			out = f
		}
		if err := doc.WriteJSON(out); err != nil {
			return fmt.Errorf("writing the export: %w", err)
		}
		if o.out != "" && o.out != "-" {
			fmt.Fprintf(cmd.ErrOrStderr(), "exported %d nodes of %s to %s\n", len(doc.Nodes), args[0], o.out)
		}
		return nil
	})
	cmd.Flags().BoolVar(&o.acl, "acl", false, "include each node's ACL")
	cmd.Flags().StringVar(&o.out, "out", "", "write to this file instead of standard output")
	return cmd
}

type importOptions struct {
	into      string
	overwrite bool
	acl       bool
	output    output.Format
}

// importInterrupted says how far an interrupted import got, and how to
// finish or undo it.
func importInterrupted(file, into string, res subtree.Result) string {
	done := res.Created + res.Updated
	if done == 0 {
		return fmt.Sprintf("interrupted: import into %s wrote nothing", into)
	}
	undo := fmt.Sprintf("to undo, delete %s and everything below it (it did not exist before)", into)
	if !res.CreatedInto {
		undo = fmt.Sprintf("to undo, delete the %d node(s) it created under %s", res.Created, into)
	}
	return fmt.Sprintf("interrupted: import into %s wrote %d of %d nodes; to finish, run it again with --overwrite (zkherd import %s --into %s --overwrite); %s",
		into, done, res.Total, file, into, undo)
}

func newImportCmd(g *globalOptions) *cobra.Command {
	o := importOptions{}
	cmd := newCommand("import FILE", "Write an export's nodes into a namespace (for tests), refusing to overwrite unless told", "import", cobra.ExactArgs(1), func(cmd *cobra.Command, args []string) error {
		if o.into == "" {
			return usageErr("import needs --into /namespace (where the exported root goes)")
		}
		doc, err := subtree.ReadFile(args[0], cmd.InOrStdin())
		if err != nil {
			return usageErr("%v", err)
		}
		s, cs, err := g.session(cmd.Context(), "import")
		if err != nil {
			return err
		}
		defer s.Close()
		into := o.into
		if cs.Chroot != "" {
			into = path.Clean(cs.Chroot + "/" + into)
		}
		var ids []zk.ACL
		if user, pass, ok := strings.Cut(g.auth, ":"); ok {
			ids = zk.DigestACL(zk.PermAll, user, pass)
		}
		res, err := subtree.Import(cmd.Context(), s.Conn(), doc, subtree.ImportOptions{Into: into, Overwrite: o.overwrite, ACL: o.acl, Identities: ids})
		switch {
		case errors.Is(err, context.Canceled) && cmd.Context().Err() != nil:
			return &exitError{Code: exitInterrupted, Err: errors.New(importInterrupted(args[0], o.into, res))}
		case errors.Is(err, subtree.ErrLockedOut):
			return usageErr("%s (import without --acl, or with --auth of an identity that ACL grants create)", pkgerr.Reason(err))
		case errors.Is(err, subtree.ErrExists):
			return usageErr("%v (give --overwrite to replace their data)", err)
		case errors.Is(err, zk.ErrNoAuth):
			return usageErr("import into %s: not allowed to write there (give --auth user:password)", o.into)
		case err != nil:
			return usageErr("import into %s: %v", o.into, err)
		}
		imported := struct {
			Into string `json:"into"`
			subtree.Result
		}{o.into, res}
		return o.output.Write(cmd.OutOrStdout(), imported, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "imported %d nodes into %s: %d created, %d updated\n", res.Created+res.Updated, o.into, res.Created, res.Updated)
			return err
		})
	})
	cmd.Flags().StringVar(&o.into, "into", "", "namespace the exported root becomes, e.g. /test/config (required)")
	cmd.Flags().BoolVar(&o.overwrite, "overwrite", false, "replace the data of nodes that exist")
	cmd.Flags().BoolVar(&o.acl, "acl", false, "give created nodes the exported ACLs (default world:anyone:cdrwa)")
	registerOutput(cmd, &o.output)
	return cmd
}
