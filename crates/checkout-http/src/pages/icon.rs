//! `/favicon.ico`: the favicon (`templates/favicon.svg`, a card on a blue rounded square) as a
//! 32 × 32 Windows icon, for the clients that ask for `/favicon.ico` whatever the page says
//! (bookmarks, feed readers, older browsers). It is drawn here from the same rectangles as the
//! SVG, so no image library is needed; a test checks it against the SVG's colours.

use std::sync::OnceLock;

/// The icon's side in pixels.
const SIZE: usize = 32;

/// One filled rectangle of the SVG: x, y, width, height, corner radius, colour (RGB).
type Rect = (f32, f32, f32, f32, f32, [u8; 3]);

/// The rectangles of `templates/favicon.svg`, in painting order.
const RECTS: [Rect; 4] = [
    (0.0, 0.0, 32.0, 32.0, 6.0, [0x1d, 0x5f, 0xd1]),
    (5.0, 9.0, 22.0, 15.0, 2.0, [0xff, 0xff, 0xff]),
    (5.0, 12.0, 22.0, 3.0, 0.0, [0x1c, 0x24, 0x30]),
    (8.0, 18.0, 7.0, 2.0, 0.0, [0x1d, 0x5f, 0xd1]),
];

/// Whether the point (`px`, `py`) is inside the rounded rectangle `r`.
fn inside(r: &Rect, px: f32, py: f32) -> bool {
    let (x, y, w, h, radius, _) = *r;
    if px < x || py < y || px > x + w || py > y + h {
        return false;
    }
    // Nearest point of the inner rectangle whose corners are the rounding circles' centres.
    let cx = px.clamp(x + radius, x + w - radius);
    let cy = py.clamp(y + radius, y + h - radius);
    (px - cx).powi(2) + (py - cy).powi(2) <= radius * radius
}

/// The colour (RGBA) of pixel (`col`, `row`), row 0 at the top.
fn pixel(col: usize, row: usize) -> [u8; 4] {
    let (px, py) = (col as f32 + 0.5, row as f32 + 0.5);
    RECTS
        .iter()
        .rev()
        .find(|r| inside(r, px, py))
        .map_or([0, 0, 0, 0], |r| [r.5[0], r.5[1], r.5[2], 0xff])
}

/// The icon file: one 32-bit BMP image in an ICO container.
pub fn favicon_ico() -> &'static [u8] {
    static ICO: OnceLock<Vec<u8>> = OnceLock::new();
    ICO.get_or_init(|| {
        let pixels = SIZE * SIZE * 4;
        let mask = SIZE * 4; // 1 bit a pixel, rows padded to 4 bytes
        let image = 40 + pixels + mask;
        let mut out = Vec::with_capacity(6 + 16 + image);
        // ICONDIR: reserved, type 1 (icon), one image.
        out.extend_from_slice(&[0, 0, 1, 0, 1, 0]);
        // ICONDIRENTRY: 32 × 32, no palette, 1 plane, 32 bits, size, offset 22.
        out.extend_from_slice(&[SIZE as u8, SIZE as u8, 0, 0, 1, 0, 32, 0]);
        out.extend_from_slice(&(image as u32).to_le_bytes());
        out.extend_from_slice(&22u32.to_le_bytes());
        // BITMAPINFOHEADER: the height counts the colour rows and the mask rows.
        out.extend_from_slice(&40u32.to_le_bytes());
        out.extend_from_slice(&(SIZE as i32).to_le_bytes());
        out.extend_from_slice(&(2 * SIZE as i32).to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&32u16.to_le_bytes());
        out.extend_from_slice(&[0; 4]); // BI_RGB
        out.extend_from_slice(&((pixels + mask) as u32).to_le_bytes());
        out.extend_from_slice(&[0; 16]); // resolution, palette
                                         // Colour rows, bottom-up, BGRA.
        for row in (0..SIZE).rev() {
            for col in 0..SIZE {
                let [r, g, b, a] = pixel(col, row);
                out.extend_from_slice(&[b, g, r, a]);
            }
        }
        // The AND mask, bottom-up: 1 where transparent.
        for row in (0..SIZE).rev() {
            let mut bits = [0u8; 4];
            for col in 0..SIZE {
                if pixel(col, row)[3] == 0 {
                    bits[col / 8] |= 0x80 >> (col % 8);
                }
            }
            out.extend_from_slice(&bits);
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `<rect>`s of the SVG as [`Rect`]s (a missing attribute is 0; `#abc` is `#aabbcc`).
    fn svg_rects(svg: &str) -> Vec<Rect> {
        let attr = |tag: &str, name: &str| -> String {
            tag.split(&format!(" {name}=\""))
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or("0")
                .to_owned()
        };
        svg.split("<rect")
            .skip(1)
            .map(|tag| {
                let num = |name: &str| attr(tag, name).parse::<f32>().unwrap_or(-1.0);
                let hex: String = attr(tag, "fill").trim_start_matches('#').to_owned();
                let hex = if hex.len() == 3 {
                    hex.chars().flat_map(|c| [c, c]).collect()
                } else {
                    hex
                };
                let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
                let (w, h) = (num("width"), num("height"));
                (
                    num("x"),
                    num("y"),
                    w,
                    h,
                    num("rx"),
                    [byte(0), byte(2), byte(4)],
                )
            })
            .collect()
    }

    #[test]
    fn the_icon_is_a_32_pixel_ico_drawn_like_the_svg() {
        let svg = include_str!("../../../../templates/favicon.svg");
        assert_eq!(
            svg_rects(svg),
            RECTS.to_vec(),
            "the icon draws the SVG's rectangles"
        );
        let ico = favicon_ico();
        assert_eq!(&ico[..6], &[0, 0, 1, 0, 1, 0]);
        assert_eq!((ico[6], ico[7]), (32, 32));
        assert_eq!(ico.len(), 22 + 40 + 32 * 32 * 4 + 32 * 4);
        // The corner is transparent (rounded), the centre of the card's stripe is dark.
        assert_eq!(pixel(0, 0)[3], 0);
        assert_eq!(pixel(16, 0), [0x1d, 0x5f, 0xd1, 0xff]);
        assert_eq!(pixel(16, 13), [0x1c, 0x24, 0x30, 0xff]);
        assert_eq!(pixel(20, 20), [0xff, 0xff, 0xff, 0xff]);
    }
}
