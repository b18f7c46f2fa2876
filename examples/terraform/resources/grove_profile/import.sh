# A profile imports by id, name or short id.
terraform import grove_profile.web example-web
