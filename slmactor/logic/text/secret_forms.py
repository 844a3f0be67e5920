"""The credential formats the redactor recognises by their shape: one table of provider tokens.

Owns the data, not the passes: each row is (TYPE, pattern, needles). TYPE names the marker
(`«redacted:TYPE»`); the pattern matches the token, or, with a group named `k`, the context
that stays followed by the token; the needles are literals one of which a text must contain
before the pattern is tried at all (an `in` test is far cheaper than a regex pass). Every
pattern starts at a literal or a small character set, and every quantifier is bounded, so a
pass is linear and jumps between candidates.

The shapes are the providers' documented token formats, cross-checked against the published
rule sets of gitleaks (config/gitleaks.toml, v8) and Yelp/detect-secrets (detect_secrets/
plugins, 1.5): the patterns here are written from the formats, not copied from either.

* clouds: AWS access key ids (`AKIA ASIA ABIA ACCA A3T…`, 20 characters) and Bedrock keys
  (`ABSK…`); Google API keys (`AIza` + 35), OAuth client secrets (`GOCSPX-`) and access
  tokens (`ya29.`); Azure AD client secrets (`xxx8Q~…`); DigitalOcean (`do[opr]_v1_` + 64 hex);
  Databricks (`dapi` + 32 hex); Heroku (`HRKU-`);
* code hosts: GitHub (`ghp_ gho_ ghu_ ghs_ ghr_` + 36, `github_pat_`), GitLab (`glpat- gldt-
  glft- glsoat- glrt- glcbt- glimt- glptt- glagent- gloas- glffct-`, runner `GR1348941`),
  Atlassian/Bitbucket (`ATATT3 ATCTT3 ATBB`);
* package registries: PyPI (`pypi-AgE…`, a macaroon), npm (`npm_` + 36), RubyGems
  (`rubygems_` + 48 hex), NuGet (`oy2` + 43), Docker Hub (`dckr_pat_ dckr_oat_`);
* chat: Slack tokens (`xoxa- xoxb- xoxp- xoxo- xoxs- xoxr- xoxe- xoxe.xoxb- xapp-`) and
  webhooks (`hooks.slack.com/services/…`), Discord webhooks (`discord.com/api/webhooks/ID/…`),
  (Telegram bot tokens, `<bot id>:A` + 34, are found from their colon by the redactor);
* payment: Stripe (`sk_ rk_ pk_` + `live_ test_ prod_`, webhook `whsec_`), Square (`sq0atp-
  sq0csp- EAAA…`), PayPal (`A21AA…`), Braintree (`access_token$production$…`), Shopify
  (`shpat_ shpca_ shppa_ shpss_`);
* mail: SendGrid (`SG.<22>.<43>`), Mailgun (`key-` + 32); Mailchimp keys (32 hex + `-us<dc>`)
  are found from their `-us` by the redactor;
* AI APIs: Anthropic (`sk-ant-`), OpenAI (`sk-`, `sk-proj-`, ...), Hugging Face (`hf_`,
  `api_org_`), Groq (`gsk_`), xAI (`xai-`), Perplexity (`pplx-`), Replicate (`r8_`);
* others with a distinctive prefix: Twilio API keys (`SK` + 32 hex), Grafana (`glsa_ glc_`),
  Sentry (`sntryu_ sntrys_`), Postman (`PMAK-`), Linear (`lin_api_`), Doppler (`dp.pt.`),
  age (`AGE-SECRET-KEY-1`), Vault (`hvs. hvb. hvr.`), Mapbox (`sk.eyJ…`), Netlify (`nfp_`),
  Firebase Cloud Messaging server keys (`AAAA…:APA91b…`), Teams webhooks
  (`….webhook.office.com/webhookb2/…`);
* encodings: JWTs (`eyJ….eyJ…[.sig]`, checked by the redactor), a base64-encoded PEM
  (`LS0tLS1CRUdJTi…` is "-----BEGIN": kubeconfig `client-key-data`, Kubernetes `tls.key`), PEM
  private-key blocks (whole, cut before END, or with JSON `\\n` escapes as in a GCP
  service-account file), PuTTY key files (`Private-Lines:`).

Forms that need a name or a context (passwords, `AccountKey=`, a Docker `auth`, headers, URLs)
are the redactor's other passes, not this table.
"""

from __future__ import annotations

#: Characters of a base64url token, the alphabet most of these formats draw from.
_B64URL = "[A-Za-z0-9_-]"
#: The end of a token: the next character cannot continue it.
_END = "(?![A-Za-z0-9_-])"

#: (TYPE, pattern, needles). A pattern that starts with a plain literal character and has no
#: top-level alternation is merged with the others that share that first character into one
#: pass (`c(?:…|…)`, which the engine scans for like a literal), so sixty forms cost some
#: twenty scans; its needles (default: its leading literal) only feed the one search that
#: decides whether a short text needs the token passes at all. Any other pattern is a pass of
#: its own, tried only when one of its needles is in the text. Within a merged pass the first
#: alternative that matches wins, so a longer prefix comes before a shorter one that would
#: also match it (`sk-ant-` before `sk-`, `xoxe.` before `xoxe-`).
TOKEN_FORMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # ---- clouds
    ("aws_access_key", r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[0-9A-Z]{16}(?![0-9A-Za-z])",
     ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")),
    ("aws_bedrock_key", r"ABSK[A-Za-z0-9+/]{60,400}={0,2}", ()),
    ("google_api_key", r"AIza[0-9A-Za-z_-]{35}" + _END, ()),
    ("google_oauth", r"GOCSPX-" + _B64URL + r"{24,64}", ()),
    ("google_oauth", r"ya29\." + _B64URL + r"{20,2048}", ()),
    # An Azure AD client secret: three characters, a digit, `Q~`, then 31 to 34 more.
    ("azure_client_secret", (r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}"
     r"(?![A-Za-z0-9_~.-])"), ("Q~",)),
    ("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])", ("_v1_",)),
    ("databricks_token", r"dapi[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])", ()),
    ("heroku_key", r"HRKU-" + _B64URL + r"{20,100}" + _END, ()),
    # ---- code hosts
    ("github_token", r"gh[pousr]_[A-Za-z0-9]{30,255}(?![A-Za-z0-9_])",
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    ("github_token", r"github_pat_[A-Za-z0-9_]{22,255}", ()),
    ("gitlab_token",
     r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas|ffct)-[A-Za-z0-9_.-]{20,1024}",
     ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-",
      "gloas-", "glffct-")),
    ("gitlab_token", r"GR1348941" + _B64URL + r"{20,64}" + _END, ()),
    ("atlassian_token", r"AT(?:ATT3|CTT3|BB)[A-Za-z0-9_=-]{24,400}(?![A-Za-z0-9_=-])",
     ("ATATT3", "ATCTT3", "ATBB")),
    # ---- package registries
    ("pypi_token", r"pypi-AgE" + _B64URL + r"{16,4096}", ()),
    ("npm_token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", ()),
    ("rubygems_token", r"rubygems_[a-f0-9]{48}(?![A-Za-z0-9])", ()),
    ("nuget_key", r"oy2[a-z0-9]{43}(?![A-Za-z0-9])", ()),
    ("docker_token", r"dckr_(?:pat|oat)_" + _B64URL + r"{20,128}" + _END, ()),
    # ---- chat
    ("slack_token", r"xox(?:e\.xox[bp]|[abposre])-[A-Za-z0-9-]{10,255}", ()),
    ("slack_token", r"xapp-[0-9]-[A-Za-z0-9-]{10,255}", ()),
    ("slack_webhook",
     r"(?P<k>hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_+/-]{8,256}",
     ("hooks.slack.com",)),
    ("discord_webhook",
     r"(?P<k>discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/)" + _B64URL + r"{20,200}",
     ("/api/webhooks/",)),
    # ---- payment
    ("stripe_key", r"sk_(?:live|test|prod)_[A-Za-z0-9]{10,247}(?![A-Za-z0-9])", ()),
    ("stripe_key", r"rk_(?:live|test|prod)_[A-Za-z0-9]{10,247}(?![A-Za-z0-9])", ()),
    ("stripe_key", r"pk_(?:live|test|prod)_[A-Za-z0-9]{10,247}(?![A-Za-z0-9])", ()),
    ("stripe_key", r"whsec_[A-Za-z0-9+/=]{24,128}", ()),
    ("square_token", r"sq0(?:atp|csp)-" + _B64URL + r"{22,64}" + _END, ()),
    ("square_token", r"EAAA" + _B64URL + r"{56,128}" + _END, ()),
    ("paypal_token", r"A21AA" + _B64URL + r"{40,512}" + _END, ()),
    ("braintree_token", r"access_token\$(?:production|sandbox)\$[a-z0-9]{8,32}\$[a-f0-9]{16,64}",
     ()),
    ("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])", ()),
    # ---- mail
    ("sendgrid_key", r"SG\." + _B64URL + r"{16,32}\." + _B64URL + r"{30,64}" + _END, ()),
    ("mailgun_key", r"key-[a-f0-9]{32}(?![A-Za-z0-9])", ()),
    # ---- AI APIs (Anthropic before the looser OpenAI prefix)
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{20,255}", ()),
    ("openai_key", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,255}", ()),
    ("huggingface_token", r"hf_[A-Za-z0-9]{30,255}(?![A-Za-z0-9_])", ()),
    ("huggingface_token", r"api_org_[A-Za-z]{34}" + _END, ()),
    ("ai_api_key", r"gsk_[A-Za-z0-9]{40,64}(?![A-Za-z0-9])", ()),
    ("ai_api_key", r"xai-[A-Za-z0-9]{40,128}(?![A-Za-z0-9])", ()),
    ("ai_api_key", r"pplx-[A-Za-z0-9]{40,64}(?![A-Za-z0-9])", ()),
    ("ai_api_key", r"r8_[A-Za-z0-9]{37}(?![A-Za-z0-9])", ()),
    # ---- others with a distinctive prefix
    ("twilio_key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", ()),
    ("grafana_token", r"gl(?:sa|c)_[A-Za-z0-9_+/]{32,400}={0,3}", ("glsa_", "glc_")),
    ("sentry_token", r"sntry[us]_[A-Za-z0-9_+/=]{40,512}", ()),
    ("postman_key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", ()),
    ("linear_key", r"lin_api_[A-Za-z0-9]{40}", ()),
    ("doppler_token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,64}", ()),
    ("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ()),
    # HashiCorp Vault service, batch and recovery tokens (base64url after the dot: `_` and `-`).
    ("vault_token", r"hv[sbr]\." + _B64URL + r"{24,512}" + _END, ("hvs.", "hvb.", "hvr.")),
    # Mapbox secret tokens: `sk.` and a JWT-like dotted base64url pair.
    ("mapbox_token", r"sk\.eyJ" + _B64URL + r"{10,512}\." + _B64URL + r"{10,512}" + _END,
     ("sk.eyJ",)),
    # Netlify personal access tokens.
    ("netlify_token", r"nfp_[A-Za-z0-9]{30,64}" + _END, ()),
    # Firebase Cloud Messaging legacy server keys (`AAAA` + 7, `:APA91b` + ~134).
    ("fcm_server_key", r"AAAA" + _B64URL + r"{7}:APA91b" + _B64URL + r"{60,300}" + _END,
     (":APA91b",)),
    # Microsoft Teams incoming webhooks: the path after `webhookb2/` is the credential.
    ("teams_webhook",
     r"(?P<k>webhook\.office\.com/webhookb2/)[A-Za-z0-9@/_-]{20,512}",
     ("webhook.office.com",)),
    # ---- encodings. A JWT is checked by the redactor: the pattern takes the whole dotted
    # base64url run possessively, so it never fails part-way and rescans (`eyJeyJ…` is linear).
    ("jwt", r"eyJ[A-Za-z0-9_-]*+(?:\.[A-Za-z0-9_-]*+)*+", ()),
    # base64 of "-----BEGIN": a PEM block carried as base64 (kubeconfig `client-key-data`).
    ("private_key", r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{16,65536}={0,2}", ()),
    # PEM private keys: a whole block, or a block whose END line was cut off (its body may be
    # JSON-escaped: `\n` between the lines, as a GCP service-account file holds it).
    ("private_key",
     (r"-{4,5} ?BEGIN[A-Z0-9 _-]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}"
     r"(?:[\s\S]{0,16384}?-{4,5} ?END[A-Z0-9 _-]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}"
     r"|[A-Za-z0-9+/=\s:,.\\-]{0,16384})"),
     ("PRIVATE KEY",)),
    ("private_key",
     r"(?P<k>Private-Lines:[ \t]{0,8}[0-9]{1,4})(?:\\[rn]|\s)[A-Za-z0-9+/=\s\\]{16,16384}",
     ("Private-Lines:",)),
)  # fmt: skip

#: TYPEs whose match must also look random (a digit, or both cases): `sk-` is a loose prefix
#: (`sk-feature-branch-name`), and a Twilio `SK` key is hex (never all letters of one case).
NEEDS_RANDOM = frozenset({"openai_key"})
