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
    /// `?lg=` when it names a language, else the session's culture, else Spanish.
    pub fn choose(lg: Option<&str>, culture: Option<Culture>) -> Lang {
        match lg.map(str::trim) {
            Some(l) if l.eq_ignore_ascii_case("en") => Lang::En,
            Some(l) if l.eq_ignore_ascii_case("es") => Lang::Es,
            _ => match culture {
                Some(Culture::En) => Lang::En,
                _ => Lang::Es,
            },
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
    /// Result page title.
    pub result_title: &'static str,
    /// Approved.
    pub result_approved: &'static str,
    /// Declined (SVC_006).
    pub result_declined: &'static str,
    /// Declined (SVC_006), and the terminal allows another card.
    pub declined_try_another: &'static str,
    /// Link back to the form after a decline that allows another card.
    pub pay_another_card: &'static str,
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
    /// An unexpected error.
    pub unexpected: &'static str,
    /// Support reference label.
    pub support_reference: &'static str,
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
    bad_expiry: "Use el formato MM/AA.",
    expired_card: "La tarjeta está vencida.",
    bad_cvv: "El código debe tener 3 dígitos (4 en American Express).",
    processor_unreachable: "No pudimos comunicarnos con el procesador de tarjetas. No se realizó ningún cargo; intente de nuevo.",
    processor_refused: "El procesador de tarjetas no aceptó la solicitud. No se realizó ningún cargo; revise los datos e intente de nuevo.",
    result_title: "Resultado del pago",
    result_approved: "Pago aprobado. ¡Gracias!",
    result_declined: "La tarjeta fue rechazada. No se realizó ningún cargo.",
    declined_try_another: "La tarjeta fue rechazada. No se realizó ningún cargo; puede pagar con otra tarjeta.",
    pay_another_card: "Pagar con otra tarjeta",
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
    unexpected: "Ocurrió un error inesperado. No se realizó ningún cargo que no vaya a ver el comercio.",
    support_reference: "Referencia para soporte",
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
    bad_expiry: "Use the MM/YY format.",
    expired_card: "The card has expired.",
    bad_cvv: "The code must be 3 digits (4 for American Express).",
    processor_unreachable: "We could not reach the card processor. Nothing was charged; please try again.",
    processor_refused: "The card processor did not accept the request. Nothing was charged; check the details and try again.",
    result_title: "Payment result",
    result_approved: "Payment approved. Thank you!",
    result_declined: "The card was declined. Nothing was charged.",
    declined_try_another: "The card was declined. Nothing was charged; you can pay with another card.",
    pay_another_card: "Pay with another card",
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
    unexpected: "An unexpected error occurred. Any charge will be visible to the merchant.",
    support_reference: "Support reference",
};

impl Texts {
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
        assert_eq!(Lang::choose(Some("en"), Some(Culture::Es)), Lang::En);
        assert_eq!(Lang::choose(Some("ES"), Some(Culture::En)), Lang::Es);
        assert_eq!(Lang::choose(Some("fr"), Some(Culture::En)), Lang::En);
        assert_eq!(Lang::choose(None, None), Lang::Es);
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
            same.iter().all(|k| ["total"].contains(&k.as_str())),
            "untranslated: {same:?}"
        );
    }
}
