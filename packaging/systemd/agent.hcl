# An agent config for packaging/systemd/grove.service: copy it to
# /etc/grove/agent.hcl. README's "Agent configuration" lists every setting.
bind     = "127.0.0.1:7470"  # loopback; any other address needs a tls block (docs/security.md)
data_dir = "/var/lib/grove"  # the unit's StateDirectory, the only place it may write
