# The agent config of the OCI image (packaging/oci/Containerfile). Other
# hosts reach the agent, so it serves HTTPS: mount the certificate and key at
# /etc/grove/tls (docs/security.md).
bind     = "0.0.0.0:7470"
data_dir = "/var/lib/grove"

tls {
  cert_file = "/etc/grove/tls/server.pem"
  key_file  = "/etc/grove/tls/server-key.pem"
}
