fn main() {
    let d = precedent_cuad::load(std::path::Path::new("/work/shared/data/cuad")).unwrap();
    for c in &d.contracts {
        for a in &c.annotations {
            if a.placement == precedent_cuad::Placement::Unplaced {
                println!(
                    "{} | {} | {:?}",
                    c.id.chars().take(30).collect::<String>(),
                    precedent_cuad::CATEGORIES[a.category],
                    a.text.chars().take(150).collect::<String>()
                );
            }
        }
    }
}
