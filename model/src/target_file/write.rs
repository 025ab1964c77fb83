//! Writing a target file: [`Target::to_toml`], section by section (the top-level keys, the
//! accounts, the fixtures, the limits and the names SPEC.md does not show), each value
//! quoted as TOML quotes it.

use super::{Account, ExpiredOption, FactorCode, Fixtures, Target};

impl Target {
    /// The target as a target file. Secrets are written in clear: this is for a server's own
    /// description of itself (`harness serve`), whose credentials are not secret.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        self.write_top_level(&mut out);
        for (role, account) in &self.accounts {
            write_account(&mut out, role, account);
        }
        write_fixtures(&mut out, &self.fixtures);
        out.push_str("\n[limits]\n");
        out.push_str(&toml::to_string(&self.limits).unwrap_or_default());
        for (table, tables) in [
            ("param_names", &self.param_names),
            ("field_names", &self.field_names),
        ] {
            for (key, names) in tables {
                out.push_str(&format!("\n[{table}.{}]\n", quote(key)));
                for (name, target_name) in names {
                    out.push_str(&format!("{} = {}\n", quote(name), quote(target_name)));
                }
            }
        }
        out
    }

    /// Writes the keys before the first table: name, URLs, scheme, races, TLS trust.
    fn write_top_level(&self, out: &mut String) {
        out.push_str(&format!("name = {}\n", quote(&self.name)));
        out.push_str(&format!("base_url = {}\n", quote(&self.base_url)));
        if let Some(ws_url) = &self.ws_url {
            out.push_str(&format!("ws_url = {}\n", quote(ws_url)));
        }
        if let Some(direct) = &self.direct_access_url {
            out.push_str(&format!("direct_access_url = {}\n", quote(direct)));
        }
        out.push_str(&format!(
            "signature_scheme = {}\n",
            quote(&self.signature_scheme)
        ));
        out.push_str(&format!("allow_destructive = {}\n", self.allow_destructive));
        if !self.races {
            out.push_str("races = false\n");
        }
        if let Some(rounds) = self.race_rounds {
            out.push_str(&format!("race_rounds = {rounds}\n"));
        }
        if let Some(ca_file) = &self.tls.ca_file {
            out.push_str(&format!(
                "ca_file = {}\n",
                quote(&ca_file.to_string_lossy())
            ));
        }
        if self.tls.accept_invalid_certs {
            out.push_str("accept_invalid_certs = true\n");
        }
    }
}

/// `text` as a TOML string.
fn quote(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// Writes one `[accounts.<role>]` table, its secret and second factor in clear.
fn write_account(out: &mut String, role: &str, account: &Account) {
    // A role that is not a bare key (a space, a dot, a quote) is written quoted, or
    // it would name another table or none.
    let bare = !role.is_empty()
        && role
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let role = if bare { role.to_owned() } else { quote(role) };
    out.push_str(&format!(
        "\n[accounts.{role}]\nclient_id = {}\nclient_secret = {}\n",
        quote(&account.client_id),
        quote(account.client_secret.expose())
    ));
    if let Some(factor) = &account.second_factor {
        let key = match factor.code {
            FactorCode::Totp(_) => "totp_secret",
            FactorCode::Fixed(_) => "code",
        };
        out.push_str(&format!(
            "second_factor = {{ parameter = {}, {key} = {} }}\n",
            quote(&factor.parameter),
            quote(factor.code.secret().expose())
        ));
    }
}

/// Writes the `[fixtures]` table: what serde writes, then the inline tables and the
/// Direct Access key it does not.
fn write_fixtures(out: &mut String, fixtures: &Fixtures) {
    out.push_str("\n[fixtures]\n");
    out.push_str(&toml::to_string(fixtures).unwrap_or_default());
    if let Some(option) = &fixtures.expired_otm_option {
        out.push_str(&format!(
            "expired_otm_option = {}\n",
            inline_expired_option(option)
        ));
    }
    if !fixtures.expired_otm_options.is_empty() {
        let options: Vec<String> = fixtures
            .expired_otm_options
            .iter()
            .map(inline_expired_option)
            .collect();
        out.push_str(&format!("expired_otm_options = [{}]\n", options.join(", ")));
    }
    if let Some(order) = &fixtures.direct_access_order {
        let params = toml::Value::try_from(&order.params)
            .map(|params| params.to_string())
            .unwrap_or_else(|_| "{}".to_owned());
        out.push_str(&format!(
            "direct_access_order = {{ method = {}, params = {params} }}\n",
            quote(&order.method)
        ));
    }
    for key in super::SUBSCRIPTION_KEYS {
        if let Some(request) = fixtures.subscription_of(key) {
            out.push_str(&super::subscription::inline(key, request));
        }
    }
    if let Some(price) = fixtures.resting_close_price {
        out.push_str(&format!("resting_close_price = {price:?}\n"));
    }
    for (key, read) in [
        ("order_read", &fixtures.order_read),
        (
            "direct_access_order_read",
            &fixtures.direct_access_order_read,
        ),
    ] {
        if let Some(read) = read {
            out.push_str(&format!("{key} = {}\n", super::order_read::inline(read)));
        }
    }
    if let Some(key) = &fixtures.direct_access_key {
        out.push_str(&format!("direct_access_key = {}\n", quote(key.expose())));
    }
}

/// An expired option as an inline table.
fn inline_expired_option(option: &ExpiredOption) -> String {
    let expired_at = option
        .expired_at
        .map(|at| format!(", expired_at = {at}"))
        .unwrap_or_default();
    format!(
        "{{ instrument_name = {}, currency = {}{expired_at} }}",
        quote(&option.instrument_name),
        quote(&option.currency)
    )
}
