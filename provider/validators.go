package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/grovehq/grove/api"
)

// This file holds the plan-time checks terraform-plugin-framework-validators
// has no validator for. Each applies the rule the agent applies at submit
// (api.ValidateSettings, core/engine's CreateCluster), so a configuration
// that plans also applies.

// duration checks a Go duration string, such as "5s" or "1m30s", that is
// not negative: api.ValidateSettings's rule for restart.delay,
// restart.window, update.delay and update.monitor. It is written here
// because terraform-plugin-framework-validators has no duration validator
// (terraform-plugin-framework-timeouts has one, but internal to it, and it
// accepts negative durations, which the agent refuses).
type duration struct{}

var _ validator.String = duration{}

func (duration) Description(context.Context) string {
	return `must be a non-negative duration such as "5s" or "1m"`
}

func (d duration) MarkdownDescription(ctx context.Context) string { return d.Description(ctx) }

func (d duration) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	s := req.ConfigValue.ValueString()
	if v, err := time.ParseDuration(s); err != nil || v < 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%s %s, got %q.", req.Path, d.Description(ctx), s))
	}
}

// sizeOrder holds a cluster's sizes to min_size <= desired_capacity <=
// max_size, max_size -1 being unbounded, as scaling.CheckSizeParams does
// for the agent when the cluster is created; an unset desired_capacity is
// min_size there, so only min_size and max_size are compared then. The
// library's int64validator.AtMostSumOf cannot say this: -1 is not a bound.
type sizeOrder struct{}

var _ resource.ConfigValidator = sizeOrder{}

func (sizeOrder) Description(context.Context) string {
	return "min_size <= desired_capacity <= max_size, where max_size -1 is unbounded"
}

func (s sizeOrder) MarkdownDescription(ctx context.Context) string { return s.Description(ctx) }

func (sizeOrder) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var desired, minSize, maxSize types.Int64
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("desired_capacity"), &desired)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("min_size"), &minSize)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("max_size"), &maxSize)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// A value that is not known yet is checked at apply; one out of its own
	// range is reported by its attribute's validator, and comparing it
	// would only repeat that.
	known := func(v types.Int64, least int64) bool { return !v.IsNull() && !v.IsUnknown() && v.ValueInt64() >= least }
	bounded := known(maxSize, 0)
	if known(minSize, 0) && bounded && minSize.ValueInt64() > maxSize.ValueInt64() {
		resp.Diagnostics.AddAttributeError(path.Root("min_size"), "Invalid cluster size",
			fmt.Sprintf("min_size (%d) must not be greater than max_size (%d).", minSize.ValueInt64(), maxSize.ValueInt64()))
	}
	if !known(desired, 0) {
		return
	}
	if known(minSize, 0) && desired.ValueInt64() < minSize.ValueInt64() {
		resp.Diagnostics.AddAttributeError(path.Root("desired_capacity"), "Invalid cluster size",
			fmt.Sprintf("desired_capacity (%d) must not be less than min_size (%d).", desired.ValueInt64(), minSize.ValueInt64()))
	}
	if bounded && desired.ValueInt64() > maxSize.ValueInt64() {
		resp.Diagnostics.AddAttributeError(path.Root("desired_capacity"), "Invalid cluster size",
			fmt.Sprintf("desired_capacity (%d) must not be greater than max_size (%d).", desired.ValueInt64(), maxSize.ValueInt64()))
	}
}

// metadataRule holds a metadata map to the agent's rules
// (api.ValidateMetadata): at most api.MaxMetadataKeys keys, none empty, each
// value at most api.MaxMetadataValueBytes as JSON. Without it a profile or
// cluster the agent refuses fails at apply, after what comes before it in
// the plan was created.
type metadataRule struct{}

var _ validator.Map = metadataRule{}

func (metadataRule) Description(context.Context) string {
	return fmt.Sprintf("must have at most %d keys, none empty, each value at most %d bytes as JSON", api.MaxMetadataKeys, api.MaxMetadataValueBytes)
}

func (m metadataRule) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (metadataRule) ValidateMap(ctx context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	// Keys are known whenever the map is; a value known only at apply
	// counts as empty here, and the agent checks it then.
	m := map[string]any{}
	for k, v := range req.ConfigValue.Elements() {
		m[k] = ""
		if s, ok := v.(types.String); ok && !s.IsUnknown() && !s.IsNull() {
			m[k] = s.ValueString()
		}
	}
	if err := api.ValidateMetadata(req.Path.String(), m); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid metadata", err.Error())
	}
}
