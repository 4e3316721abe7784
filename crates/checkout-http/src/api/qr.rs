//! GET /pay/api/payment/{checkoutSessionId}/qr: the QR code of a payment link, as SVG (the
//! default) or PNG, for the merchant to print or show. It encodes exactly the `paymentLink`
//! the link's creation returned, rendered by the `qrcode` crate (error correction M, the
//! 4-module quiet zone the standard asks for).

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::session::SessionKind;
use checkout_domain::{CheckoutError, SvcCode, ValidationErrors};
use qrcode::{Color, EcLevel, QrCode};

use crate::api::status::session_id;
use crate::auth::Caller;
use crate::openapi::responses::BearerErrors;
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// Pixels per module of the PNG (a 25-module code with its quiet zone is 264 px wide).
const PNG_SCALE: usize = 8;

/// Modules of light border around the code (ISO/IEC 18004 asks for 4).
const QUIET_ZONE: usize = 4;

/// The image format asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QrFormat {
    /// `image/svg+xml`.
    Svg,
    /// `image/png`.
    Png,
}

/// A QR code as an SVG document.
#[derive(utoipa::ToSchema)]
#[schema(value_type = String, content_media_type = "image/svg+xml")]
pub struct SvgImage(pub String);

/// A QR code as PNG bytes.
#[derive(utoipa::ToSchema)]
#[schema(value_type = String, format = Binary, content_media_type = "image/png")]
pub struct PngImage(pub Vec<u8>);

/// The route's query.
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct QrQuery {
    /// `svg` (the default) or `png`.
    #[param(value_type = Option<String>, pattern = "^(svg|png)$", example = "png")]
    pub format: Option<String>,
}

/// Reads `format` from the query: absent is SVG; anything but one `svg` or `png` is a 400
/// naming `Format`.
fn format_of(req: &HttpRequest) -> Result<QrFormat, ApiError> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(req.query_string()).unwrap_or_default();
    let formats: Vec<&str> = pairs
        .iter()
        .filter(|(k, _)| k == "format")
        .map(|(_, v)| v.as_str())
        .collect();
    match formats.as_slice() {
        [] | ["svg"] => Ok(QrFormat::Svg),
        ["png"] => Ok(QrFormat::Png),
        _ => {
            let mut errors = ValidationErrors::new();
            errors.add("Format", "Must be svg or png, given once.");
            Err(errors.into())
        }
    }
}

/// The QR code of `text` as an SVG document.
pub fn svg(text: &str) -> Result<String, qrcode::types::QrError> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)?;
    Ok(code
        .render::<qrcode::render::svg::Color<'_>>()
        .quiet_zone(true)
        .min_dimensions(256, 256)
        .build())
}

/// The QR code of `text` as an 8-bit greyscale PNG, 8 pixels a module.
pub fn png(text: &str) -> anyhow::Result<Vec<u8>> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)?;
    let modules = code.width();
    let colors = code.to_colors();
    let side = (modules + 2 * QUIET_ZONE) * PNG_SCALE;
    let mut pixels = vec![0xffu8; side * side];
    for (i, color) in colors.iter().enumerate() {
        if *color != Color::Dark {
            continue;
        }
        let (col, row) = (i % modules + QUIET_ZONE, i / modules + QUIET_ZONE);
        for y in row * PNG_SCALE..(row + 1) * PNG_SCALE {
            pixels[y * side + col * PNG_SCALE..y * side + (col + 1) * PNG_SCALE].fill(0);
        }
    }
    let mut out = Vec::new();
    let side_u32 = u32::try_from(side)?;
    let mut encoder = png::Encoder::new(&mut out, side_u32, side_u32);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(out)
}

/// A payment link's QR code.
///
/// The QR code of one of the caller's payment links, encoding its `paymentLink`, as SVG (the
/// default) or PNG (`?format=png`), to print on an invoice or show at a counter. Sessions of
/// other terminals, unknown ids and integrated checkouts (which have no link to share) answer
/// 404, exactly like unknown ids.
#[utoipa::path(
    get,
    path = "/pay/api/payment/{checkoutSessionId}/qr",
    tag = "Payments",
    security(("bearer" = [])),
    params(crate::openapi::params::SessionPath, QrQuery, crate::openapi::params::OperationId),
    responses(
        (status = 200, description = "The QR code of the session's paymentLink", content(
            (inline(SvgImage) = "image/svg+xml"),
            (inline(PngImage) = "image/png"),
        )),
        (status = 400, description = "A format other than svg or png", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "SVC_007 payment session not found, or not a payment link", body = ProblemDetails, content_type = "application/problem+json"),
        BearerErrors,
    )
)]
pub async fn payment_link_qr(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let format = format_of(&req)?;
    let session = state.checkout.payment_status(&caller.0, id).await?;
    if !matches!(session.kind(), SessionKind::PaymentLink) {
        return Err(CheckoutError::svc(SvcCode::Svc007).into());
    }
    let link = state.checkout.policy().payment_link(session.id());
    let rendered = match format {
        QrFormat::Svg => svg(&link)
            .map(|s| ("image/svg+xml", s.into_bytes()))
            .map_err(anyhow::Error::from),
        QrFormat::Png => png(&link).map(|p| ("image/png", p)),
    };
    let (content_type, body) = rendered.map_err(|e| {
        tracing::error!(error = %e, "the QR code could not be rendered");
        ApiError::http(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The QR code could not be rendered.",
        )
    })?;
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(("Cache-Control", "private, max-age=3600"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Content-Security-Policy", "default-src 'none'"))
        .body(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_render_a_link_with_a_quiet_zone() {
        let link = "https://pay.example/pay/link/9b2f6c1e-7a43-4d0e-9a7b-2c1d5e8f3a60";
        let svg = svg(link).unwrap_or_default();
        assert!(svg.starts_with("<?xml") && svg.contains("<svg"), "{svg}");
        let png = png(link).unwrap_or_default();
        assert_eq!(&png[1..4], b"PNG");
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let info = decoder.read_info().map(|r| r.info().clone());
        let info = info.expect("a PNG");
        assert_eq!(info.width, info.height);
        assert_eq!(info.width as usize % PNG_SCALE, 0);
    }
}
