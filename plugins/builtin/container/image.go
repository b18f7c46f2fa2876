package container

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/moby/client"
)

// DemoImage is the tag of Grove's demo image: the static grove binary
// serving `grove demo-http` on $GROVE_NODE_PORT.
const DemoImage = "localhost/grove-demo:latest"

// ImportBinary imports a static binary as a one-file image whose command
// runs it with args, so examples and tests need no registry.
func ImportBinary(ctx context.Context, dockerHost, binary, tag string, args ...string) error {
	c, err := client.New(client.WithHost(dockerHost))
	if err != nil {
		return err
	}
	defer c.Close()
	f, err := os.Open(binary)
	if err != nil {
		return fmt.Errorf("open %s: %w", binary, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	name := filepath.Base(binary)
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: st.Size()})
		if err == nil {
			_, err = io.Copy(tw, f)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	cmd := fmt.Sprintf("%q", "/"+name)
	for _, a := range args {
		cmd += fmt.Sprintf(", %q", a)
	}
	res, err := c.ImageImport(ctx, client.ImageImportSource{Source: pr, SourceName: "-"}, tag,
		client.ImageImportOptions{Changes: []string{"CMD [" + cmd + "]"}})
	if err != nil {
		return fmt.Errorf("import %s as %s: %w", binary, tag, err)
	}
	defer res.Close()
	// The answer streams JSON messages; the last status is the image id.
	// Podman's compatible API does not apply the tag on import, so tag it.
	var id string
	dec := json.NewDecoder(res)
	for {
		var msg struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("import %s: %w", binary, err)
		}
		if msg.Error != "" {
			return fmt.Errorf("import %s: %s", binary, msg.Error)
		}
		if strings.HasPrefix(msg.Status, "sha256:") {
			id = strings.TrimSpace(msg.Status)
		}
	}
	if id == "" {
		return nil
	}
	if _, err := c.ImageTag(ctx, client.ImageTagOptions{Source: id, Target: tag}); err != nil {
		return fmt.Errorf("tag %s as %s: %w", id, tag, err)
	}
	return nil
}
