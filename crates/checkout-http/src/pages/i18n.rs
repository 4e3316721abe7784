//! The pages' words in Spanish and English. One struct per language, so the compiler checks
//! that every text exists in both.

use checkout_domain::card::{CardField, CardFieldError};
use checkout_domain::values::Culture;
use serde::Serialize;

/// A page language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Spanish (the default).
    Es,
    /// English.
    En,
}

impl Lang {
    /// The page language: `lg` (a BCP 47 tag reduced to its language: `en-US` is English),
    /// else the session's culture, else the browser's `Accept-Language`, else Spanish.
    pub fn choose(lg: Option<&str>, culture: Option<Culture>, accept: Option<&str>) -> Lang {
        if let Some(lang) = lg.and_then(Lang::of_tag) {
            return lang;
        }
        match culture {
            Some(Culture::En) => return Lang::En,
            Some(Culture::Es) => return Lang::Es,
            None => {}
        }
        accept
            .and_then(Lang::of_accept_language)
            .unwrap_or(Lang::Es)
    }

    /// The language of a BCP 47 tag (`es`, `en-US`, `es_419`), if it is one of ours.
    pub fn of_tag(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or_default();
        if primary.eq_ignore_ascii_case("en") {
            Some(Lang::En)
        } else if primary.eq_ignore_ascii_case("es") {
            Some(Lang::Es)
        } else {
            None
        }
    }

    /// The preferred of our languages in an `Accept-Language` header (RFC 9110 12.5.4): the
    /// highest weight wins, the first listed on a tie; `q=0` means "not this one".
    pub fn of_accept_language(header: &str) -> Option<Lang> {
        let mut best: Option<(u16, Lang)> = None;
        for entry in header.split(',') {
            let mut parts = entry.split(';');
            let Some(lang) = parts.next().and_then(Lang::of_tag) else {
                continue;
            };
            let weight = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .map_or(1000, |q| {
                    q.trim()
                        .parse::<f32>()
                        .map_or(0, |q| (q.clamp(0.0, 1.0) * 1000.0) as u16)
                });
            if weight > 0 && best.is_none_or(|(w, _)| weight > w) {
                best = Some((weight, lang));
            }
        }
        best.map(|(_, lang)| lang)
    }

    /// The other language (the language switch offers it).
    pub fn other(self) -> Lang {
        match self {
            Lang::Es => Lang::En,
            Lang::En => Lang::Es,
        }
    }

    /// The `lang` attribute value.
    pub fn code(self) -> &'static str {
        match self {
            Lang::Es => "es",
            Lang::En => "en",
        }
    }

    /// The texts of this language.
    pub fn texts(self) -> &'static Texts {
        match self {
            Lang::Es => &ES,
            Lang::En => &EN,
        }
    }
}

/// Every text the pages show.
#[derive(Debug, Serialize)]
pub struct Texts {
    /// Title of the payment page.
    pub pay_title: &'static str,
    /// "Paying" label before the merchant name.
    pub merchant_label: &'static str,
    /// Items table caption.
    pub items: &'static str,
    /// Quantity column.
    pub quantity: &'static str,
    /// Amount column.
    pub amount: &'static str,
    /// Additional charges caption.
    pub charges: &'static str,
    /// Total label.
    pub total: &'static str,
    /// Card form legend.
    pub card_details: &'static str,
    /// Cardholder name label.
    pub cardholder_name: &'static str,
    /// Card number label.
    pub card_number: &'static str,
    /// Expiry label.
    pub card_expiry: &'static str,
    /// Expiry hint.
    pub card_expiry_hint: &'static str,
    /// CVV label.
    pub card_cvv: &'static str,
    /// Pay button (the amount follows).
    pub pay_button: &'static str,
    /// Cancel button.
    pub cancel_button: &'static str,
    /// Heading of the error summary.
    pub fix_errors: &'static str,
    /// Note under the form.
    pub secure_note: &'static str,
    /// A required field.
    pub required: &'static str,
    /// A bad cardholder name.
    pub bad_name: &'static str,
    /// A bad card number.
    pub bad_number: &'static str,
    /// A malformed expiry.
    pub bad_expiry: &'static str,
    /// A past expiry.
    pub expired_card: &'static str,
    /// A bad CVV.
    pub bad_cvv: &'static str,
    /// SVC_003 on the form.
    pub processor_unreachable: &'static str,
    /// SVC_004 on the form.
    pub processor_refused: &'static str,
    /// The card-testing guard asks the browser for a proof of work before sending the card.
    pub guard_check: &'static str,
    /// The card-testing guard refused the post (429).
    pub guard_refused: &'static str,
    /// What a refused payer can do.
    pub guard_refused_next: &'static str,
    /// Approved.
    pub result_approved: &'static str,
    /// Declined (SVC_006).
    pub result_declined: &'static str,
    /// Declined (SVC_006), and the terminal allows another card.
    pub declined_try_another: &'static str,
    /// Outcome not known yet.
    pub result_processing: &'static str,
    /// Cancelled.
    pub result_cancelled: &'static str,
    /// Waiting for authentication.
    pub result_challenge: &'static str,
    /// Link to continue the challenge.
    pub continue_challenge: &'static str,
    /// Reference label on the result page.
    pub reference: &'static str,
    /// Challenge page title.
    pub challenge_title: &'static str,
    /// Challenge page explanation.
    pub challenge_text: &'static str,
    /// Pass the challenge.
    pub challenge_pass: &'static str,
    /// Fail the challenge.
    pub challenge_fail: &'static str,
    /// Error page title.
    pub error_title: &'static str,
    /// SVC_002 message.
    pub session_missing: &'static str,
    /// The merchant's terminal is deactivated: the session cannot be paid (SVC_005).
    pub terminal_inactive: &'static str,
    /// A cancel the processor could not confirm yet (SVC_003).
    pub cancel_unconfirmed: &'static str,
    /// A form whose security token does not match.
    pub form_expired: &'static str,
    /// The heading of that refusal.
    pub form_expired_title: &'static str,
    /// An unexpected error.
    pub unexpected: &'static str,
    /// Support reference label.
    pub support_reference: &'static str,
    /// This language's name in itself (the switch shows the other's).
    pub lang_name: &'static str,
    /// Label of the language switch.
    pub language: &'static str,
    /// Unit price column.
    pub unit_price: &'static str,
    /// Line total column.
    pub line_total: &'static str,
    /// Before the link's expiry date.
    pub pay_before: &'static str,
    /// Under the error summary: the card number and code are never shown again.
    pub retype_card: &'static str,
    /// The Pay button while the payment is sent.
    pub processing_button: &'static str,
    /// Label of the detected card brand.
    pub card_brand: &'static str,
    /// What to do after an approval.
    pub approved_next: &'static str,
    /// What to do after a decline.
    pub declined_next: &'static str,
    /// What to do while the processor confirms.
    pub processing_next: &'static str,
    /// Link that reloads the processing page.
    pub check_again: &'static str,
    /// What to do after a cancellation.
    pub cancelled_next: &'static str,
    /// An expired session.
    pub expired_message: &'static str,
    /// What to do after an expiry.
    pub expired_next: &'static str,
    /// What to do about an unknown session.
    pub unknown_next: &'static str,
    /// What to do when the form expired.
    pub form_expired_next: &'static str,
    /// Button reopening the payment page.
    pub reopen: &'static str,
    /// Button back to the merchant (the name follows).
    pub return_to: &'static str,
    /// Heading of the next-step text.
    pub what_now: &'static str,
    /// Result heading and title: approved.
    pub heading_approved: &'static str,
    /// Result heading and title: declined.
    pub heading_declined: &'static str,
    /// Result heading and title: cancelled.
    pub heading_cancelled: &'static str,
    /// Result heading and title: waiting for the bank's authentication.
    pub heading_challenge: &'static str,
    /// Result heading and title: the processor is confirming.
    pub heading_processing: &'static str,
    /// Result heading and title: expired.
    pub heading_expired: &'static str,
    /// Label of the purchase description.
    pub description: &'static str,
    /// Heading of the notice asking to type the card again.
    pub retype_heading: &'static str,
    /// Why the card must be typed again.
    pub retype_text: &'static str,
    /// What the live region says while the payment is sent.
    pub processing_status: &'static str,
    /// Before the title of a form with errors.
    pub error_prefix: &'static str,
    /// The footer link to the accessibility statement.
    pub accessibility_link: &'static str,
    /// The accessibility statement's title.
    pub a11y_title: &'static str,
    /// Who the statement is about.
    pub a11y_intro: &'static str,
    /// Heading: how accessible the pages are.
    pub a11y_status_heading: &'static str,
    /// How accessible the pages are.
    pub a11y_status: &'static str,
    /// Heading: how they are checked.
    pub a11y_checked_heading: &'static str,
    /// How they are checked.
    pub a11y_checked: &'static str,
    /// Heading: what is known not to work well.
    pub a11y_limits_heading: &'static str,
    /// What is known not to work well.
    pub a11y_limits: &'static str,
    /// Heading: how to report a barrier.
    pub a11y_contact_heading: &'static str,
    /// How to report a barrier.
    pub a11y_contact: &'static str,
    /// When the statement was written.
    pub a11y_date: &'static str,
    /// Heading of the receipt on an approved payment's page.
    pub receipt_heading: &'static str,
    /// Label of the payment's date and time.
    pub receipt_paid_at: &'static str,
    /// Label of the card paid with (and its name when its brand is not known).
    pub receipt_card: &'static str,
    /// Between the brand and the last four digits.
    pub receipt_card_ending: &'static str,
    /// Label of `internalTransactionReferenceNumber`.
    pub receipt_transaction: &'static str,
    /// Label of `checkoutSessionId`.
    pub receipt_payment_id: &'static str,
    /// What the numbers are for.
    pub receipt_keep: &'static str,
}

/// Spanish.
pub const ES: Texts = Texts {
    pay_title: "Pagar",
    merchant_label: "Comercio",
    items: "Artículos",
    quantity: "Cantidad",
    amount: "Monto",
    charges: "Cargos adicionales",
    total: "Total",
    card_details: "Datos de la tarjeta",
    cardholder_name: "Nombre del titular",
    card_number: "Número de tarjeta",
    card_expiry: "Vencimiento",
    card_expiry_hint: "MM/AA",
    card_cvv: "Código de seguridad (CVV)",
    pay_button: "Pagar",
    cancel_button: "Cancelar y volver al comercio",
    fix_errors: "Revise los campos marcados.",
    secure_note: "Sus datos de tarjeta se envían cifrados al procesador y no se guardan.",
    required: "Este campo es obligatorio.",
    bad_name: "Escriba el nombre tal como aparece en la tarjeta.",
    bad_number: "El número de tarjeta no es válido.",
    bad_expiry: "Escriba el mes y el año de vencimiento, por ejemplo 08/29.",
    expired_card: "La tarjeta está vencida.",
    bad_cvv: "El código debe tener 3 dígitos (4 en American Express).",
    processor_unreachable: "No pudimos comunicarnos con el procesador de tarjetas. No se realizó ningún cargo; intente de nuevo.",
    processor_refused: "El procesador de tarjetas no aceptó la solicitud. No se realizó ningún cargo; revise los datos e intente de nuevo.",
    guard_check: "Por seguridad, su navegador hará una breve comprobación antes de enviar la tarjeta. No se realizó ningún cargo; escriba de nuevo los datos de la tarjeta.",
    guard_refused: "Hubo demasiados intentos de pago rechazados. No se realizó ningún cargo y la tarjeta no se envió.",
    guard_refused_next: "Intente de nuevo más tarde o use otro medio de pago.",
    result_approved: "Pago aprobado. ¡Gracias!",
    result_declined: "La tarjeta fue rechazada. No se realizó ningún cargo.",
    declined_try_another: "La tarjeta fue rechazada. No se realizó ningún cargo; puede pagar con otra tarjeta.",
    result_processing: "Estamos confirmando el pago con el procesador. No vuelva a pagar; el comercio verá el resultado.",
    result_cancelled: "El pago fue cancelado.",
    result_challenge: "El pago espera la autenticación de su banco.",
    continue_challenge: "Continuar con la autenticación",
    reference: "Referencia",
    challenge_title: "Autenticación 3-D Secure (sandbox)",
    challenge_text: "Su banco pide confirmar esta compra. En el sandbox, elija el resultado de la autenticación.",
    challenge_pass: "Autenticar",
    challenge_fail: "Fallar la autenticación",
    error_title: "No se puede pagar",
    session_missing: "La sesión de pago no existe o ya venció.",
    terminal_inactive: "Este comercio no puede recibir pagos en este momento. No se realizó ningún cargo.",
    cancel_unconfirmed: "No pudimos confirmar la cancelación con el procesador de tarjetas. Intente de nuevo en unos momentos.",
    form_expired: "El formulario venció por seguridad. Vuelva a abrir la página de pago.",
    form_expired_title: "Vuelva a abrir la página e intente de nuevo",
    unexpected: "Ocurrió un error inesperado. No se realizó ningún cargo que no vaya a ver el comercio.",
    support_reference: "Referencia para soporte",
    lang_name: "Español",
    language: "Idioma",
    unit_price: "Precio unitario",
    line_total: "Importe",
    pay_before: "Puede pagar hasta el",
    retype_card: "Por su seguridad, vuelva a escribir el número de tarjeta y el código de seguridad.",
    processing_button: "Procesando el pago…",
    card_brand: "Marca",
    approved_next: "Puede cerrar esta página; el comercio ya recibió el resultado.",
    declined_next: "Si desea completar la compra, pida al comercio un nuevo enlace de pago o pague de otra forma.",
    processing_next: "Esta página se actualiza sola cada pocos segundos. No cierre la ventana ni vuelva a pagar.",
    check_again: "Consultar de nuevo",
    cancelled_next: "No se realizó ningún cargo. Si aún desea comprar, contacte al comercio.",
    expired_message: "Este pago venció y ya no se puede pagar. No se realizó ningún cargo.",
    expired_next: "Pida al comercio un nuevo enlace de pago o vuelva a su tienda para empezar de nuevo.",
    unknown_next: "Revise que abrió el enlace completo que recibió, o contacte al comercio que se lo envió.",
    form_expired_next: "Vuelva a abrir la página de pago y escriba sus datos otra vez. No se realizó ningún cargo.",
    reopen: "Abrir de nuevo la página de pago",
    return_to: "Volver a",
    what_now: "¿Qué puede hacer?",
    heading_approved: "Pago aprobado",
    heading_declined: "Tarjeta rechazada",
    heading_cancelled: "Pago cancelado",
    heading_challenge: "Falta la autenticación de su banco",
    heading_processing: "Confirmando el pago",
    heading_expired: "Pago vencido",
    description: "Descripción",
    retype_heading: "Vuelva a escribir los datos de la tarjeta",
    retype_text: "Por su seguridad no pudimos usar el formulario enviado. No se realizó ningún cargo.",
    processing_status: "Procesando el pago. No cierre ni recargue esta página.",
    error_prefix: "Error",
    accessibility_link: "Accesibilidad",
    a11y_title: "Declaración de accesibilidad",
    a11y_intro: "Esta declaración trata de las páginas de pago de este servicio: el formulario de tarjeta, la autenticación, el resultado y los mensajes de error.",
    a11y_status_heading: "Estado de cumplimiento",
    a11y_status: "Las páginas buscan cumplir las Pautas de Accesibilidad para el Contenido Web (WCAG) 2.2, nivel AA, que pide la norma europea EN 301 549 y que la Ley Europea de Accesibilidad aplica a los servicios de pago. Están hechas para usarse con teclado, con lector de pantalla, en pantallas pequeñas y sin JavaScript.",
    a11y_checked_heading: "Cómo lo comprobamos",
    a11y_checked: "Pruebas automáticas revisan cada estado de las páginas con axe-core en Chromium, en tamaño de teléfono y de escritorio, en español y en inglés, con y sin JavaScript. Los errores, el envío del pago y los resultados están en regiones que los lectores de pantalla anuncian.",
    a11y_limits_heading: "Limitaciones conocidas",
    a11y_limits: "La hora en que vence un enlace de pago se muestra en hora UTC, no en su hora local.",
    a11y_contact_heading: "Comentarios y contacto",
    a11y_contact: "Si encuentra una barrera, avise al comercio que le envió esta página e indique cuál era y qué ocurrió; el comercio es nuestro cliente y puede contactarnos.",
    a11y_date: "Declaración preparada el 28 de noviembre de 2026.",
    receipt_heading: "Recibo",
    receipt_paid_at: "Fecha y hora",
    receipt_card: "Tarjeta",
    receipt_card_ending: "terminada en",
    receipt_transaction: "Número de transacción",
    receipt_payment_id: "Identificador del pago",
    receipt_keep: "Guarde este recibo. Si contacta al comercio, indique el número de transacción y el identificador del pago.",
};

/// English.
pub const EN: Texts = Texts {
    pay_title: "Pay",
    merchant_label: "Merchant",
    items: "Items",
    quantity: "Quantity",
    amount: "Amount",
    charges: "Additional charges",
    total: "Total",
    card_details: "Card details",
    cardholder_name: "Cardholder name",
    card_number: "Card number",
    card_expiry: "Expiry",
    card_expiry_hint: "MM/YY",
    card_cvv: "Security code (CVV)",
    pay_button: "Pay",
    cancel_button: "Cancel and return to the merchant",
    fix_errors: "Please correct the marked fields.",
    secure_note: "Your card details are sent encrypted to the processor and are never stored.",
    required: "This field is required.",
    bad_name: "Enter the name as it appears on the card.",
    bad_number: "The card number is not valid.",
    bad_expiry: "Enter the expiry month and year, for example 08/29.",
    expired_card: "The card has expired.",
    bad_cvv: "The code must be 3 digits (4 for American Express).",
    processor_unreachable: "We could not reach the card processor. Nothing was charged; please try again.",
    processor_refused: "The card processor did not accept the request. Nothing was charged; check the details and try again.",
    guard_check: "For security, your browser will run a short check before the card is sent. Nothing was charged; please enter the card details again.",
    guard_refused: "There were too many declined payment attempts. Nothing was charged and the card was not sent.",
    guard_refused_next: "Please try again later or use another payment method.",
    result_approved: "Payment approved. Thank you!",
    result_declined: "The card was declined. Nothing was charged.",
    declined_try_another: "The card was declined. Nothing was charged; you can pay with another card.",
    result_processing: "We are confirming the payment with the processor. Do not pay again; the merchant will see the outcome.",
    result_cancelled: "The payment was cancelled.",
    result_challenge: "The payment is waiting for your bank's authentication.",
    continue_challenge: "Continue with the authentication",
    reference: "Reference",
    challenge_title: "3-D Secure authentication (sandbox)",
    challenge_text: "Your bank asks you to confirm this purchase. In the sandbox, choose the authentication result.",
    challenge_pass: "Authenticate",
    challenge_fail: "Fail authentication",
    error_title: "This payment cannot be made",
    session_missing: "The payment session does not exist or has expired.",
    terminal_inactive: "This merchant cannot take payments at the moment. Nothing was charged.",
    cancel_unconfirmed: "We could not confirm the cancellation with the card processor. Please try again in a moment.",
    form_expired: "The form expired for your security. Please open the payment page again.",
    form_expired_title: "Please open the page again and try once more",
    unexpected: "An unexpected error occurred. Any charge will be visible to the merchant.",
    support_reference: "Support reference",
    lang_name: "English",
    language: "Language",
    unit_price: "Unit price",
    line_total: "Line total",
    pay_before: "You can pay until",
    retype_card: "For your security, type the card number and security code again.",
    processing_button: "Processing payment…",
    card_brand: "Brand",
    approved_next: "You can close this page; the merchant has the result.",
    declined_next: "To complete the purchase, ask the merchant for a new payment link or another way to pay.",
    processing_next: "This page checks again every few seconds. Do not close it or pay again.",
    check_again: "Check again",
    cancelled_next: "Nothing was charged. If you still want to buy, contact the merchant.",
    expired_message: "This payment has expired and can no longer be paid. Nothing was charged.",
    expired_next: "Ask the merchant for a new payment link, or go back to their shop to start again.",
    unknown_next: "Check that you opened the whole link you received, or contact the merchant who sent it.",
    form_expired_next: "Open the payment page again and enter your details once more. Nothing was charged.",
    reopen: "Open the payment page again",
    return_to: "Return to",
    what_now: "What you can do",
    heading_approved: "Payment approved",
    heading_declined: "Card declined",
    heading_cancelled: "Payment cancelled",
    heading_challenge: "Your bank's authentication is needed",
    heading_processing: "Confirming your payment",
    heading_expired: "Payment expired",
    description: "Description",
    retype_heading: "Please enter your card details again",
    retype_text: "For your security the form you sent could not be used. Nothing was charged.",
    processing_status: "Processing your payment. Please do not close or reload this page.",
    error_prefix: "Error",
    accessibility_link: "Accessibility",
    a11y_title: "Accessibility statement",
    a11y_intro: "This statement covers this service's payment pages: the card form, the authentication, the result and the error messages.",
    a11y_status_heading: "Compliance status",
    a11y_status: "The pages aim to meet the Web Content Accessibility Guidelines (WCAG) 2.2 at level AA, which the European standard EN 301 549 asks for and the European Accessibility Act applies to payment services. They are built to be used with a keyboard, with a screen reader, on small screens and without JavaScript.",
    a11y_checked_heading: "How we check",
    a11y_checked: "Automated tests check every state of the pages with axe-core in Chromium, at phone and desktop sizes, in Spanish and English, with and without JavaScript. Errors, the sending of the payment and the results are in regions that screen readers announce.",
    a11y_limits_heading: "Known limitations",
    a11y_limits: "The time a payment link expires is shown in UTC, not in your local time.",
    a11y_contact_heading: "Feedback and contact",
    a11y_contact: "If you meet a barrier, tell the merchant who sent you this page which page it was and what happened; the merchant is our customer and can reach us.",
    a11y_date: "Statement prepared on 28 November 2026.",
    receipt_heading: "Receipt",
    receipt_paid_at: "Date and time",
    receipt_card: "Card",
    receipt_card_ending: "ending in",
    receipt_transaction: "Transaction number",
    receipt_payment_id: "Payment ID",
    receipt_keep: "Keep this receipt. If you contact the merchant, quote the transaction number and the payment ID.",
};

impl Texts {
    /// The label of a card field (the error summary names the field).
    pub fn field_label(&self, field: CardField) -> &'static str {
        match field {
            CardField::CardholderName => self.cardholder_name,
            CardField::CardNumber => self.card_number,
            CardField::Expiry => self.card_expiry,
            CardField::Cvv => self.card_cvv,
        }
    }

    /// The message for a card field error.
    pub fn card_error(&self, field: CardField, error: CardFieldError) -> &'static str {
        match (field, error) {
            (_, CardFieldError::Required) => self.required,
            (CardField::CardholderName, _) => self.bad_name,
            (CardField::CardNumber, _) => self.bad_number,
            (CardField::Expiry, CardFieldError::Expired) => self.expired_card,
            (CardField::Expiry, _) => self.bad_expiry,
            (CardField::Cvv, _) => self.bad_cvv,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_comes_from_lg_then_the_culture_then_spanish() {
        assert_eq!(Lang::choose(Some("en"), Some(Culture::Es), None), Lang::En);
        assert_eq!(Lang::choose(Some("ES"), Some(Culture::En), None), Lang::Es);
        assert_eq!(
            Lang::choose(Some("en-US"), Some(Culture::Es), None),
            Lang::En
        );
        assert_eq!(Lang::choose(Some("es_419"), None, Some("en")), Lang::Es);
        assert_eq!(Lang::choose(Some("fr"), Some(Culture::En), None), Lang::En);
        assert_eq!(
            Lang::choose(Some("fr"), None, Some("en-GB,en;q=0.8")),
            Lang::En
        );
        assert_eq!(Lang::choose(None, Some(Culture::Es), Some("en")), Lang::Es);
        assert_eq!(
            Lang::choose(None, None, Some("de, en;q=0.5, es;q=0.9")),
            Lang::Es
        );
        assert_eq!(Lang::choose(None, None, Some("fr, en;q=0")), Lang::Es);
        assert_eq!(Lang::choose(None, None, Some("garbage;q=x")), Lang::Es);
        assert_eq!(Lang::choose(None, None, None), Lang::Es);
    }

    #[test]
    fn every_text_is_written_in_both_languages() {
        let es = serde_json::to_value(&ES).unwrap_or_default();
        let en = serde_json::to_value(&EN).unwrap_or_default();
        let (es, en) = (
            es.as_object().cloned().unwrap_or_default(),
            en.as_object().cloned().unwrap_or_default(),
        );
        assert!(!es.is_empty());
        for (key, value) in &es {
            let other = &en[key];
            assert!(
                value.as_str().is_some_and(|s| !s.trim().is_empty()),
                "es {key}"
            );
            assert!(
                other.as_str().is_some_and(|s| !s.trim().is_empty()),
                "en {key}"
            );
        }
        // Only words that are the same in both languages may match.
        let same: Vec<&String> = es.keys().filter(|k| es[*k] == en[*k]).collect();
        assert!(
            same.iter()
                .all(|k| ["total", "error_prefix"].contains(&k.as_str())),
            "untranslated: {same:?}"
        );
    }
}
