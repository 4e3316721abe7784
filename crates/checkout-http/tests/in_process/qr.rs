//! GET /pay/api/payment/{checkoutSessionId}/qr: a payment link's QR code, SVG or PNG, for its
//! terminal only. (A browser test decodes both images back to the link.)

use actix_web::http::StatusCode;

use crate::support;

#[actix_web::test]
async fn a_payment_links_qr_code_is_svg_or_png_for_its_terminal_only() {
    let app = support::start().await;
    let token = app.token().await;
    let link = app.payment_link(&token, "INVOICE-QR").await;
    let path = format!("/pay/api/payment/{link}/qr");

    let svg = app.get_auth(&path, &token).await;
    assert_eq!(svg.status, StatusCode::OK, "{}", svg.text());
    assert_eq!(svg.header("content-type"), "image/svg+xml");
    assert_eq!(svg.header("content-security-policy"), "default-src 'none'");
    assert!(svg.text().contains("<svg"));
    let explicit = app.get_auth(&format!("{path}?format=svg"), &token).await;
    assert_eq!(explicit.body, svg.body, "svg is the default");

    let png = app.get_auth(&format!("{path}?format=png"), &token).await;
    assert_eq!(png.status, StatusCode::OK);
    assert_eq!(png.header("content-type"), "image/png");
    assert_eq!(&png.body[..8], b"\x89PNG\r\n\x1a\n");

    // A bad format: 400 naming the field; nothing else is read.
    for query in ["format=gif", "format=png&format=svg", "format="] {
        let reply = app.get_auth(&format!("{path}?{query}"), &token).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(reply.header("content-type"), "application/problem+json");
        assert!(reply.json()["errors"]["Format"].is_array(), "{query}");
    }
    // Without a token: 401. An integrated checkout has no link: 404 SVC_007, like an
    // unknown id.
    let reply = app.browse(&path, "").await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    let checkout = app.start_payment(&token, "ORDER-QR").await;
    for id in [
        checkout.as_str(),
        "00000000-0000-4000-8000-000000000000",
        "nope",
    ] {
        let reply = app
            .get_auth(&format!("/pay/api/payment/{id}/qr?format=png"), &token)
            .await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{id}");
        assert_eq!(reply.json()["type"], "SVC_007", "{id}");
    }
}
