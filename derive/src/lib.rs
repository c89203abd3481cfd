//! `#[derive(Input)]`: a tool's input declared once, as a struct. The derive
//! writes both the JSON Schema that tools/list shows and the reading of the
//! call's arguments into the struct, so the two cannot drift. What a field's
//! type means (its schema, how it is read, kura's error messages) lives in
//! the host's `args` module (`Param`); this crate only walks the fields.
//!
//! A field is required unless its type is `Option<_>`; its doc comment is
//! its description. `#[arg(...)]` adds a rule: `min = N`, `max = N`,
//! `one_of = LIST`, `nonempty`, `query`, `text` (no length bound: written
//! content), `lenient` (an integer may come as a string), `hidden` (read but
//! not listed: an accepted alias).

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::ext::IdentExt;
use syn::{
    Data, DeriveInput, Expr, Fields, GenericArgument, PathArguments, Type, parse_macro_input,
};

#[proc_macro_derive(Input, attributes(arg))]
pub fn derive_input(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

#[derive(Default)]
struct Rule {
    min: Option<Expr>,
    max: Option<Expr>,
    one_of: Option<Expr>,
    nonempty: bool,
    query: bool,
    text: bool,
    lenient: bool,
    hidden: bool,
}

impl Rule {
    fn of(field: &syn::Field) -> syn::Result<Rule> {
        let mut rule = Rule::default();
        for attr in field.attrs.iter().filter(|a| a.path().is_ident("arg")) {
            attr.parse_nested_meta(|meta| {
                match meta.path.get_ident().map(|i| i.to_string()).as_deref() {
                    Some("min") => rule.min = Some(meta.value()?.parse()?),
                    Some("max") => rule.max = Some(meta.value()?.parse()?),
                    Some("one_of") => rule.one_of = Some(meta.value()?.parse()?),
                    Some("nonempty") => rule.nonempty = true,
                    Some("query") => rule.query = true,
                    Some("text") => rule.text = true,
                    Some("lenient") => rule.lenient = true,
                    Some("hidden") => rule.hidden = true,
                    _ => return Err(meta.error("unknown #[arg] rule")),
                }
                Ok(())
            })?;
        }
        Ok(rule)
    }

    /// The host's `Rule` value, as a constant expression.
    fn tokens(&self) -> Tokens {
        let opt = |e: &Option<Expr>| match e {
            Some(e) => quote!(::core::option::Option::Some(#e)),
            None => quote!(::core::option::Option::None),
        };
        let (min, max) = (opt(&self.min), opt(&self.max));
        let one_of = match &self.one_of {
            Some(e) => quote!(::core::option::Option::Some(&#e)),
            None => quote!(::core::option::Option::None),
        };
        let Rule {
            nonempty,
            query,
            text,
            lenient,
            ..
        } = self;
        quote! {
            crate::args::Rule {
                min: #min,
                max: #max,
                one_of: #one_of,
                nonempty: #nonempty,
                query: #query,
                text: #text,
                lenient: #lenient,
            }
        }
    }
}

/// `T` of an `Option<T>`.
fn optional(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

/// A doc comment as one line: its lines trimmed and joined by spaces.
fn doc(field: &syn::Field) -> String {
    let lines: Vec<String> = field
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}

/// One field's schema entry (None when hidden) and the code reading it.
fn field(field: &syn::Field) -> syn::Result<(Option<Tokens>, Tokens)> {
    let ident = field.ident.as_ref().expect("named field");
    let mut listed = None;
    let key = ident.unraw().to_string();
    let rule = Rule::of(field)?;
    let description = doc(field);
    if description.is_empty() && !rule.hidden {
        return Err(syn::Error::new_spanned(
            field,
            "a listed input field needs a doc comment: it is its description",
        ));
    }
    let (inner, required) = match optional(&field.ty) {
        Some(t) => (t, false),
        None => (&field.ty, true),
    };
    let rule_tokens = rule.tokens();
    if !rule.hidden {
        let push = required.then(|| quote!(required.push(#key);));
        listed = Some(quote! {
            {
                const RULE: crate::args::Rule = #rule_tokens;
                properties.insert(
                    #key.into(),
                    crate::args::described(<#inner as crate::args::Param>::schema_with(&RULE), #description),
                );
                #push
            }
        });
    }
    let finish = if required {
        quote!(.ok_or_else(|| a.missing(#key))?)
    } else {
        quote!()
    };
    let read = quote! {
        let #ident = {
            const RULE: crate::args::Rule = #rule_tokens;
            <#inner as crate::args::Param>::read(&a, #key, &RULE)? #finish
        };
    };
    Ok((listed, read))
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            name,
            "Input is derived for structs",
        ));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new_spanned(name, "Input needs named fields"));
    };
    let mut listed = Vec::new();
    let mut reads = Vec::new();
    let mut idents = Vec::new();
    for f in &fields.named {
        let (entry, read) = field(f)?;
        listed.extend(entry);
        reads.push(read);
        idents.push(f.ident.as_ref().expect("named field"));
    }
    Ok(quote! {
        impl crate::args::Input for #name {
            fn schema() -> ::serde_json::Value {
                let mut properties = ::serde_json::Map::new();
                let mut required: ::std::vec::Vec<&'static str> = ::std::vec::Vec::new();
                #(#listed)*
                crate::args::object(properties, required)
            }

            fn parse(a: crate::args::Args) -> crate::error::Result<Self> {
                #(#reads)*
                ::core::result::Result::Ok(Self { #(#idents),* })
            }
        }

        impl crate::args::Param for #name {
            fn schema_with(_: &crate::args::Rule) -> ::serde_json::Value {
                <Self as crate::args::Input>::schema()
            }

            fn read(
                a: &crate::args::Args,
                key: &'static str,
                _: &crate::args::Rule,
            ) -> crate::error::Result<::core::option::Option<Self>> {
                a.obj(key)?
                    .map(<Self as crate::args::Input>::parse)
                    .transpose()
            }
        }
    })
}
