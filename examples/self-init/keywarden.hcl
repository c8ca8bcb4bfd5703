# A node that needs nobody at the keyboard: a static seal unseals it at every start, and on its
# very first start it initializes itself and runs the initialize stanzas below, once, through the
# normal request pipeline (audited), with a root token that is revoked when they are done.
# Described in docs/deployment.md ("Self-initialization"). Start it with:
#   export KEYWARDEN_SEAL_KEY="$(openssl rand -hex 32)"   # keep it: it opens the store
#   keywarden server -config keywarden.hcl
# Nobody receives a root token or shares. To create recovery shares later, see docs/deployment.md.

listener "tcp" {
  address     = "127.0.0.1:8200"
  tls_disable = true
}

# Relative paths are read against this file's directory.
storage "leveldb" {
  path = "data"
}

# OpenBao's static seal: the 32-byte key comes from the environment (or file://PATH).
seal "static" {
  current_key_id = "example-1"
  current_key    = "env://KEYWARDEN_SEAL_KEY"
}

# The audit device is declared here, not created by a request: creating one through the API is
# refused unless the configuration allows it (docs/deployment.md, audit devices).
audit "file" "to-file" {
  options {
    file_path = "audit.log"
  }
}

initialize "engines" {
  request "mount-transit" {
    operation = "update"
    path      = "sys/mounts/crypto"
    data = {
      type        = "transit"
      description = "encryption as a service"
    }
  }

  request "app-key" {
    operation = "update"
    path      = "crypto/keys/app"
    data = {
      type = "aes256-gcm96"
    }
  }
}

initialize "access" {
  request "app-policy" {
    operation = "update"
    path      = "sys/policies/acl/app"
    data = {
      policy = "path \"crypto/encrypt/app\" { capabilities = [\"update\"] }\npath \"crypto/decrypt/app\" { capabilities = [\"update\"] }"
    }
  }

  request "enable-cloud" {
    operation = "update"
    path      = "sys/auth/cloud"
    data = {
      type = "cloud"
    }
  }

  # A role for the application's cloud identity, named by the environment at first start; without
  # APP_ROLE_ARN it fails, and the node comes up without the role (allow_failure).
  request "cloud-role" {
    operation     = "update"
    path          = "auth/cloud/role/app"
    allow_failure = true
    data = {
      auth_type               = "iam"
      bound_iam_principal_arn  = "env://APP_ROLE_ARN"
      resolve_cloud_unique_ids = false
      token_policies           = "app"
    }
  }
}
