# A profile imports by id, name or short id. The API shows the values its
# type marks sensitive (here env) as "(sensitive)", so the plan after the
# import replaces the profile: Terraform cannot know that they are equal.
import {
  to = grove_profile.web
  id = "example-web"
}
